"""The class "a web page in the user's browser drives the server", on every POST route.

A page on any local dev server (another localhost port) or any site can send simple requests
to loopback without a preflight: `text/plain` or form bodies, no custom headers. Each shape
must be refused before the route runs, on every POST route; the server's own origin and
non-browser clients (hooks, CLI, MCP clients: no Origin, no Sec-Fetch-*) still pass.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from starlette.routing import Route

from live_memory.config import load_settings
from live_memory.gateway import create_app
from tests.support import loopback
from tests.support.server_process import ServerProcess

pytestmark = [pytest.mark.e2e, pytest.mark.slow]


def _post_routes(tmp_path: Path) -> list[str]:
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path), "HOME": str(tmp_path)})
    app = create_app(settings, environ={})  # its lifespan never runs: nothing starts
    rest = [r.path for r in app.routes if isinstance(r, Route) and "POST" in (r.methods or ())]
    return sorted({*rest, "/mcp", "/notify"})  # /mcp takes every method; /notify is middleware


POST_ROUTES = _post_routes(Path("/nonexistent-live-memory-guard"))
BROWSER_ONLY = {"/ui/action"}
"""The dashboard's confirmed actions: HTML forms of its own pages (Origin and a CSRF token
required), so a plain client is refused there; plain clients have /reset, /clear, /reload."""
JSON = {"content-type": "application/json"}
MCP_ACCEPT = {"accept": "application/json, text/event-stream"}


def _browser_shapes(port: int) -> dict[str, dict[str, str]]:
    """Requests a hostile page can make (each names the trick), all aimed at this server."""
    return {
        "another localhost port": JSON | {"origin": f"http://localhost:{port + 1}"},
        "same host, no port": JSON | {"origin": "http://127.0.0.1"},
        "https scheme": JSON | {"origin": f"https://127.0.0.1:{port}"},
        "origin with a path": JSON | {"origin": f"http://127.0.0.1:{port}/x"},
        "text/plain body": {"content-type": "text/plain"},
        "text/plain with a json-looking tail": {"content-type": "text/plain; a=application/json"},
        "form body": {"content-type": "application/x-www-form-urlencoded"},
        "no content type": {},
        "cross-site fetch": JSON | {"sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors"},
        "same-site fetch (other port)": JSON | {"sec-fetch-site": "same-site"},
    }


def _post(server: ServerProcess, path: str, headers: dict[str, str], body: bytes) -> httpx.Response:
    # Headers exactly as given: httpx adds no content-type for raw `content=`.
    return loopback.post(
        f"{server.url}{path}", content=body, headers=MCP_ACCEPT | headers, timeout=30
    )


@pytest.mark.parametrize("path", POST_ROUTES)
def test_browser_shaped_requests_are_refused_on_every_post_route(
    edge_server: ServerProcess, edge_repo: Path, path: str
) -> None:
    body = b'{"cwd": "%s", "question": "q?", "events": []}' % str(edge_repo).encode()
    got = {
        name: _post(edge_server, path, headers, body)
        for name, headers in _browser_shapes(edge_server.port).items()
    }
    wrong = {
        name: (r.status_code, r.text) for name, r in got.items() if r.status_code not in (403, 415)
    }
    assert wrong == {}
    for response in got.values():
        assert isinstance(response.json().get("error"), str), response.text
    # Nothing the refused requests asked for happened: the workspace was never created.
    stats = loopback.get(f"{edge_server.url}/stats", params={"cwd": str(edge_repo)}, timeout=10)
    assert stats.status_code == 404, stats.text


@pytest.mark.parametrize("path", [p for p in POST_ROUTES if p not in BROWSER_ONLY])
def test_the_servers_own_origin_and_plain_clients_pass_the_guard(
    edge_server: ServerProcess, path: str
) -> None:
    own = f"http://127.0.0.1:{edge_server.port}"
    allowed = (
        JSON,  # hooks, the CLI, MCP clients
        {"content-type": "application/json; charset=utf-8"},
        JSON | {"origin": own, "sec-fetch-site": "same-origin"},  # a page this server serves
        JSON | {"origin": f"http://localhost:{edge_server.port}"},
        # A form on one of the server's own pages: its exact Origin is the proof.
        {"content-type": "application/x-www-form-urlencoded", "origin": own},
    )
    for headers in allowed:
        response = _post(edge_server, path, headers, b"{}")
        assert response.status_code not in (403, 415, 421), (headers, response.text)


def test_the_notify_hook_script_is_accepted(
    edge_server: ServerProcess, edge_repo: Path, tmp_path: Path
) -> None:
    """The plugin's hook posts with its own hand-written HTTP client; it must keep working."""
    import importlib.util  # noqa: PLC0415

    script = Path(__file__).parents[2] / "plugin" / "scripts" / "notify.py"
    spec = importlib.util.spec_from_file_location("notify_hook", script)
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    runtime = os.environ["XDG_RUNTIME_DIR"]  # where the server publishes its identity
    endpoint = hook.Endpoint(
        {"LIVE_MEMORY_PORT": str(edge_server.port), "XDG_RUNTIME_DIR": runtime}
    )
    body = (
        b'{"cwd": "%s", "events": [{"path": "src/app.py", "kind": "change"}]}'
        % str(edge_repo).encode()
    )
    assert endpoint.post("/notify", body, timeout_s=10) == hook.DELIVERED


def test_a_dashboard_action_behind_a_mapped_port_passes_and_another_origin_does_not(
    edge_server: ServerProcess, edge_repo: Path
) -> None:
    """`docker run -p 8000:7711`: the browser's page and its requests say port 8000 while the
    server listens on its own port; another local port is still another origin."""
    mapped = {"host": "127.0.0.1:8000"}
    body = b'{"cwd": "%s"}' % str(edge_repo).encode()
    own = _post(edge_server, "/clear", JSON | mapped | {"origin": "http://127.0.0.1:8000"}, body)
    assert own.status_code not in (403, 415, 421), own.text
    other = _post(edge_server, "/clear", JSON | mapped | {"origin": "http://127.0.0.1:8001"}, body)
    assert other.status_code == 403, other.text


def test_a_host_name_is_refused_with_the_setting_to_allow_it_and_served_once_allowed(
    edge_fake: object, tmp_path: Path
) -> None:
    by_name = {"host": "live-memory:7711"}
    with ServerProcess(tmp_path / "closed", {}) as server:
        refused = loopback.get(f"{server.url}/stats", headers=by_name, timeout=30)
    assert refused.status_code == 421
    assert "LIVE_MEMORY_ALLOWED_HOSTS" in refused.json()["error"]
    env = {"LIVE_MEMORY_ALLOWED_HOSTS": "live-memory, Build-Box.lan"}
    with ServerProcess(tmp_path / "open", env) as server:
        served = loopback.get(f"{server.url}/health", headers=by_name, timeout=30)
        other = loopback.get(f"{server.url}/stats", headers={"host": "evil.example"}, timeout=30)
        config = loopback.get(f"{server.url}/config", timeout=30).json()
    assert served.status_code == 200, served.text
    assert other.status_code == 421
    assert "allowed_hosts" in str(config)
