"""Hardening through a real `live-memory serve`: who may talk to it, limits, faults, durability.

Most tests share one serial-mode server (and one fake model) started for the module, each on
its own workspace; the ones that need their own process (a token, a dead provider, `kill -9`,
a planted snapshot) start it themselves.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import httpx2
import orjson
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from starlette.routing import Route

from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.gateway import create_app
from live_memory.memory.snapshot_store import SnapshotStore
from tests.e2e.conftest import REPO_FILES, ensure_workspace, provider_env
from tests.support import loopback
from tests.support.app_server import AppServer
from tests.support.fakes import Error, FakeProvider, Malformed, Recorded, Reply, Text
from tests.support.repo import make_repo
from tests.support.server_process import ServerProcess, free_port

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

TOKEN = "s3cret-token-for-tests"  # a test token, not a credential
FORGED_HOSTS = ("evil.example", "evil.example:7711", "127.0.0.1.evil.example", "localhost.evil")
FORGED_ORIGINS = ("http://evil.example", "http://127.0.0.1.evil.example:7711", "null")
MCP_HEADERS = {"accept": "application/json, text/event-stream"}
JSON = {"content-type": "application/json"}

# Every route the server answers: the REST table in gateway/routes.py, /notify (fast path) and
# MCP. `test_the_route_list_matches_the_app` keeps this list honest.
ROUTES: tuple[tuple[str, str], ...] = (
    ("GET", "/health"),
    ("GET", "/identity"),
    ("GET", "/stats"),
    ("POST", "/reset"),
    ("POST", "/clear"),
    ("POST", "/reload"),
    ("GET", "/actors"),
    ("POST", "/api/ask"),
    ("POST", "/api/enqueue"),
    ("GET", "/api/export"),
    ("POST", "/api/import"),
    ("GET", "/api/banner"),
    ("POST", "/api/open"),
    ("GET", "/config"),
    ("GET", "/ui"),
    ("GET", "/ui/workspace"),
    ("GET", "/ui/actors"),
    ("GET", "/ui/actors/rows"),
    ("GET", "/ui/login"),
    ("POST", "/ui/login-link"),
    ("GET", "/ui/confirm"),
    ("POST", "/ui/action"),
    ("POST", "/notify"),
    ("POST", "/mcp"),
    ("GET", "/mcp"),
    ("DELETE", "/mcp"),
)
# /identity is how a client checks the server before it sends the token (server_identity.py).
GUARDED = tuple(route for route in ROUTES if route[1] not in ("/health", "/identity", "/ui/login"))
"""/ui/login is open like /health: it checks its own one-time link (the dashboard's tests)."""


# --- fixtures and helpers -------------------------------------------------------------------
@pytest.fixture(scope="module")
def shared_fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def served(
    shared_fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ServerProcess]:
    env = provider_env(shared_fake, "anthropic") | {"LIVE_MEMORY_CONCURRENCY": "serial"}
    with ServerProcess(tmp_path_factory.mktemp("served"), env) as server:
        yield server


@pytest.fixture
def fresh(shared_fake: FakeProvider, served: ServerProcess, repo: Path) -> Path:
    """A new workspace on the shared server, warmed so one question costs one model call."""
    shared_fake.reset()
    shared_fake.responder = lambda recorded: Text("shared answer")
    _warm(served.url, repo)
    return repo


def _warm(url: str, repo: Path, headers: dict[str, str] | None = None) -> None:
    """Held file content, so the cold-memory guard does not add model calls."""
    event = {"path": "src/app.py", "kind": "read", "content": REPO_FILES["src/app.py"]}
    # A notification alone creates no workspace: a clear does (no model call).
    cleared = loopback.post(f"{url}/clear", json={"cwd": str(repo)}, headers=headers, timeout=10)
    assert cleared.status_code == 200, cleared.text
    reply = loopback.post(
        f"{url}/notify", json={"cwd": str(repo), "events": [event]}, headers=headers, timeout=10
    )
    assert reply.status_code == 200, reply.text


def _ask(url: str, repo: Path, question: str, **extra: Any) -> httpx.Response:
    body = {"question": question, "cwd": str(repo), **extra}
    return loopback.post(f"{url}/api/ask", json=body, timeout=60)


def _stats(url: str, repo: Path, headers: dict[str, str] | None = None) -> httpx.Response:
    return loopback.get(f"{url}/stats", params={"cwd": str(repo)}, headers=headers, timeout=10)


def _raw(url: str, method: str, path: str, headers: dict[str, str]) -> httpx.Response:
    body = b"{}" if method == "POST" else None
    return loopback.request(method, f"{url}{path}", content=body, headers=headers, timeout=10)


def _error(response: httpx.Response) -> str:
    payload = response.json()
    assert isinstance(payload, dict) and isinstance(payload.get("error"), str), response.text
    return str(payload["error"])


async def _mcp_call(url: str, headers: dict[str, str], arguments: dict[str, Any]) -> Any:
    async with (
        httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=60.0)) as client,
        streamable_http_client(f"{url}/mcp", http_client=client) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await session.call_tool("ask_live_memory", arguments)


# --- who may talk to it ----------------------------------------------------------------------
def test_the_route_list_matches_the_app(tmp_path: Path) -> None:
    settings = load_settings({"LIVE_MEMORY_DATA_DIR": str(tmp_path), "HOME": str(tmp_path)})
    app = create_app(settings, environ={})  # its lifespan never runs: nothing starts
    rest = {
        (method, route.path)
        for route in app.routes
        if isinstance(route, Route) and route.methods
        for method in route.methods
        if method != "HEAD"
    }
    assert rest == {r for r in ROUTES if r[1] not in ("/mcp", "/notify")}
    paths = {route.path for route in app.routes if isinstance(route, Route)}
    assert paths == {path for _, path in ROUTES} - {"/notify"}  # /notify is middleware


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_forged_host_is_refused_on_every_route(
    served: ServerProcess, method: str, path: str
) -> None:
    for host in FORGED_HOSTS:
        response = _raw(served.url, method, path, {"host": host})
        assert response.status_code == 421, (host, response.text)
        assert "DNS-rebinding" in _error(response)


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_a_forged_origin_is_refused_on_every_route(
    served: ServerProcess, method: str, path: str
) -> None:
    for origin in FORGED_ORIGINS:
        response = _raw(served.url, method, path, {"origin": origin})
        assert response.status_code == 403, (origin, response.text)
        assert "Origin" in _error(response)


def test_loopback_host_and_origin_pass_the_guard(served: ServerProcess) -> None:
    port = served.port
    for host, name in (
        ("127.0.0.1", "127.0.0.1"),
        (f"localhost:{port}", "localhost"),
        ("[::1]", "[::1]"),
    ):
        origin = f"http://{name}:{port}"  # exactly this server: scheme, host and port
        response = _raw(served.url, "GET", "/health", {"host": host, "origin": origin})
        assert response.status_code == 200, (host, response.text)


def test_a_dashboard_page_number_that_is_not_one_is_a_400(served: ServerProcess) -> None:
    assert served.request("GET", "/ui", params={"page": "0"}).status_code == 200
    for bad in ("abc", "-1", "1.5", "\u00b2", "\u0663", str(C.DASHBOARD_MAX_PAGE + 1)):
        response = served.request("GET", "/ui", params={"page": bad})
        assert response.status_code == 400, (bad, response.status_code)
        assert "No such page" in response.text


def _raw_status(port: int, head: bytes) -> int:
    """The status of a hand-written request (httpx cannot send a header twice)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(b"GET /actors HTTP/1.1\r\n" + head + b"Connection: close\r\n\r\n")
        status_line = sock.makefile("rb").readline()
    return int(status_line.split()[1])


def test_ambiguous_host_or_origin_headers_are_refused(served: ServerProcess) -> None:
    ambiguous = (
        b"Host: evil.example\r\nHost: 127.0.0.1\r\n",  # RFC 9112: more than one Host is a 400
        b"Host: 127.0.0.1\r\nOrigin: http://evil.example\r\nOrigin: http://127.0.0.1\r\n",
        b"Host: evil.example\\@127.0.0.1\r\n",  # not a host[:port] at all
    )
    statuses = [_raw_status(served.port, head) for head in ambiguous]
    assert all(status in (400, 403, 421) for status in statuses), statuses


@pytest.fixture(scope="module")
def token_server(
    shared_fake: FakeProvider, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[AppServer]:
    env = provider_env(shared_fake, "anthropic") | {"LIVE_MEMORY_TOKEN": TOKEN}
    with AppServer(tmp_path_factory.mktemp("token"), env) as server:
        yield server


@pytest.mark.parametrize(("method", "path"), GUARDED)
def test_a_missing_or_wrong_token_is_401_on_every_route_but_health(
    token_server: AppServer, method: str, path: str
) -> None:
    wrong: tuple[dict[str, str], ...] = (
        {},
        {"authorization": "Bearer wrong"},
        {"authorization": f"Bearer {TOKEN}x"},
        {"authorization": f"Bearer {TOKEN[:-1]}"},
        {"authorization": TOKEN},
        {"authorization": f"Basic {TOKEN}"},
    )
    for headers in wrong:
        response = _raw(token_server.url, method, path, headers)
        assert response.status_code == 401, (headers, response.text)
        assert "LIVE_MEMORY_TOKEN" in _error(response)


def test_health_needs_no_token(token_server: AppServer) -> None:
    assert loopback.get(f"{token_server.url}/health", timeout=10).status_code == 200


def test_the_right_token_opens_every_route_and_mcp(
    token_server: AppServer, shared_fake: FakeProvider, repo: Path
) -> None:
    shared_fake.reset()
    shared_fake.responder = lambda recorded: Text("authorised answer")
    auth = {"authorization": f"Bearer {TOKEN}"}
    url, cwd = token_server.url, {"cwd": str(repo)}
    _warm(url, repo, auth)
    calls: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/health", {}),
        ("GET", "/stats", {"params": cwd}),
        ("GET", "/actors", {}),
        ("POST", "/api/ask", {"json": {"question": "what is this?", **cwd}}),
        ("POST", "/notify", {"json": {**cwd, "events": []}}),
        ("POST", "/clear", {"json": cwd}),
        ("POST", "/reset", {"json": cwd}),
        ("POST", "/reload", {"json": {}}),
    ]
    refused = {}
    for method, path, kwargs in calls:
        response = loopback.request(method, f"{url}{path}", headers=auth, timeout=60, **kwargs)
        if not 200 <= response.status_code < 300:
            refused[path] = (response.status_code, response.text)
    result = asyncio.run(_mcp_call(url, auth, {"question": "and over MCP?", "cwd": str(repo)}))
    assert not result.is_error
    assert "authorised answer" in "".join(getattr(c, "text", "") for c in result.content)
    assert refused == {}


# --- limits ----------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/notify", "/api/ask", "/reset", "/clear"])
def test_a_body_over_max_body_bytes_is_413_declared_or_streamed(
    served: ServerProcess, path: str
) -> None:
    size = C.MAX_BODY_BYTES + 1
    declared = loopback.post(f"{served.url}{path}", content=b" " * size, headers=JSON, timeout=30)
    assert declared.status_code == 413, declared.text
    assert str(C.MAX_BODY_BYTES) in _error(declared) and "body" in _error(declared)

    def chunks() -> Iterator[bytes]:  # no content-length: the server must count as it reads
        sent = 0
        while sent < size:
            piece = min(1 << 20, size - sent)
            sent += piece
            yield b" " * piece

    streamed = loopback.post(f"{served.url}{path}", content=chunks(), headers=JSON, timeout=30)
    assert streamed.status_code == 413, streamed.text
    assert str(C.MAX_BODY_BYTES) in _error(streamed)


def test_a_9_mib_notify_on_a_raw_socket_reads_a_413_not_a_reset(served: ServerProcess) -> None:
    """The client writes the whole body before it reads (as hooks' HTTP clients do): the
    server drains the refused body, so the 413 arrives instead of ECONNRESET."""
    host, port = served.url.split("//")[1].split(":")
    size = 9 * 1024 * 1024
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(
            f"POST /notify HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {size}\r\n\r\n".encode()
        )
        sock.sendall(b" " * size)
        reply = sock.makefile("rb")
        status = reply.readline()
        headers = {}
        while (line := reply.readline().strip()) != b"":
            name, _, value = line.partition(b":")
            headers[name.strip().lower()] = value.strip()
        body = json.loads(reply.read(int(headers[b"content-length"])))
    assert status.split()[1] == b"413", status
    assert str(C.MAX_BODY_BYTES) in body["error"]


def test_a_body_over_the_limit_on_mcp_is_413(served: ServerProcess) -> None:
    response = loopback.post(
        f"{served.url}/mcp",
        content=b" " * (C.MAX_BODY_BYTES + 1),
        headers=MCP_HEADERS | {"content-type": "application/json"},
        timeout=30,
    )
    assert response.status_code == 413, response.text


def test_too_many_events_is_413_naming_the_limit(served: ServerProcess, fresh: Path) -> None:
    events = [{"path": f"f{i}.py", "kind": "change"} for i in range(C.MAX_NOTIFY_EVENTS + 1)]
    response = loopback.post(
        f"{served.url}/notify", json={"cwd": str(fresh), "events": events}, timeout=10
    )
    assert response.status_code == 413
    message = _error(response)
    assert "events" in message and str(C.MAX_NOTIFY_EVENTS) in message
    at_limit = events[: C.MAX_NOTIFY_EVENTS]
    ok = loopback.post(f"{served.url}/notify", json={"cwd": str(fresh), "events": at_limit})
    assert ok.status_code == 200, ok.text


def test_a_question_over_max_question_chars_is_413_naming_the_limit(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider
) -> None:
    response = _ask(served.url, fresh, "x" * (C.MAX_QUESTION_CHARS + 1))
    assert response.status_code == 413
    message = _error(response)
    assert "question" in message and str(C.MAX_QUESTION_CHARS) in message
    result = asyncio.run(
        _mcp_call(served.url, {}, {"question": "y" * (C.MAX_QUESTION_CHARS + 1), "cwd": str(fresh)})
    )
    assert result.is_error
    assert str(C.MAX_QUESTION_CHARS) in result.content[0].text
    assert shared_fake.requests == []  # refused before any model call


@pytest.mark.parametrize(
    "tokens", [-1, -(10**6), "12", 1.5, True, [64], {"n": 64}, C.MAX_ANSWER_TOKENS_CAP + 1]
)
def test_bad_max_answer_tokens_is_422_naming_it(
    served: ServerProcess, fresh: Path, tokens: object
) -> None:
    response = _ask(served.url, fresh, "short?", max_answer_tokens=tokens)
    assert response.status_code == 422, response.text
    assert "max_answer_tokens" in _error(response)


@pytest.mark.parametrize(
    ("requested", "sent"),
    [(C.MAX_ANSWER_TOKENS_CAP, C.MAX_ANSWER_TOKENS_CAP), (1, C.MIN_ANSWER_TOKENS)],
)
def test_max_answer_tokens_at_the_bounds_reaches_the_model_clamped_to_the_minimum(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider, requested: int, sent: int
) -> None:
    response = _ask(served.url, fresh, "how long may you talk?", max_answer_tokens=requested)
    assert response.status_code == 200, response.text
    assert shared_fake.requests[-1].body["max_tokens"] == sent


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/api/ask"), ("POST", "/reset"), ("POST", "/clear"), ("POST", "/notify")],
)
def test_a_relative_cwd_is_422_naming_it(served: ServerProcess, method: str, path: str) -> None:
    body = {"cwd": "src/project", "question": "q?", "events": [{"path": "a", "kind": "change"}]}
    response = loopback.request(method, f"{served.url}{path}", json=body, timeout=10)
    assert response.status_code == 422, response.text
    assert "absolute" in _error(response)


def test_a_relative_cwd_on_stats_is_422(served: ServerProcess) -> None:
    response = loopback.get(f"{served.url}/stats", params={"cwd": "src/project"}, timeout=10)
    assert response.status_code == 422, response.text
    assert "absolute" in _error(response)


def test_an_unknown_workspace_on_stats_is_404_naming_it(
    served: ServerProcess, tmp_path: Path
) -> None:
    never_seen = make_repo(tmp_path / "never-seen", {"a.txt": "a\n"})
    response = _stats(served.url, never_seen)
    assert response.status_code == 404
    assert str(never_seen) in _error(response)


def _entries(cwd: str, transcript: Path) -> list[tuple[str, str, dict[str, Any]]]:
    """Every route that names a workspace, with a body (or query) naming `cwd`."""
    event = {"path": "etc/shadow", "kind": "read", "content": "root:x:0:0\n"}
    return [
        ("POST", "/api/ask", {"json": {"cwd": cwd, "question": "hi"}}),
        ("POST", "/notify", {"json": {"cwd": cwd, "events": [event]}}),
        ("GET", "/stats", {"params": {"cwd": cwd}}),
        ("POST", "/reset", {"json": {"cwd": cwd}}),
        ("POST", "/clear", {"json": {"cwd": cwd}}),
        ("POST", "/api/import", {"json": {"cwd": cwd, "facts": [{"text": "a fact"}]}}),
        ("GET", "/api/export", {"params": {"cwd": cwd}}),
        (
            "POST",
            "/api/enqueue",
            {"json": {"cwd": cwd, "session_id": "s", "transcript_path": str(transcript)}},
        ),
    ]


def test_a_root_that_is_slash_or_a_home_is_refused_on_every_entry_and_creates_nothing(
    shared_fake: FakeProvider, served: ServerProcess, tmp_path: Path
) -> None:
    # `--cwd /` indexed the whole disk (36.5k prompt tokens for "hi"), and the model of a
    # server running as root could read /etc/shadow.
    shared_fake.reset()
    home = served.data_dir / "home"  # the server's $HOME
    (home / "dotfiles").mkdir(exist_ok=True)
    (home / ".git").mkdir(exist_ok=True)  # a repository at $HOME: dotfiles/ maps to $HOME
    transcript = tmp_path / "t.jsonl"
    transcript.write_text("{}\n", encoding="utf-8")
    workspaces = served.data_dir / C.SNAPSHOT_DIR_NAME
    before = sorted(workspaces.iterdir()) if workspaces.exists() else []
    known = loopback.get(f"{served.url}/health", timeout=10).json()["workspaces_active"]
    for cwd in ("/", str(home), str(home / "dotfiles"), str(served.data_dir)):
        for method, path, arguments in _entries(cwd, transcript):
            response = loopback.request(method, f"{served.url}{path}", timeout=30, **arguments)
            assert response.status_code == 403, (cwd, path, response.text)
            assert "LIVE_MEMORY_ALLOWED_ROOTS" in _error(response), (cwd, path)
        banner = loopback.get(f"{served.url}/api/banner", params={"cwd": cwd}, timeout=30)
        assert "LIVE_MEMORY_ALLOWED_ROOTS" in banner.json()["banner"]
        result = asyncio.run(_mcp_call(served.url, {}, {"question": "hi", "cwd": cwd}))
        assert result.is_error and "LIVE_MEMORY_ALLOWED_ROOTS" in result.content[0].text
    assert shared_fake.requests == []  # no model call
    assert (sorted(workspaces.iterdir()) if workspaces.exists() else []) == before
    health = loopback.get(f"{served.url}/health", timeout=10).json()
    assert health["workspaces_active"] == known


def test_a_broad_root_named_in_allowed_roots_is_served(fake: FakeProvider, tmp_path: Path) -> None:
    home = tmp_path / "data" / "home"
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_ALLOWED_ROOTS": str(home)}
    fake.responder = lambda recorded: Text("served")
    with AppServer(tmp_path / "data", env) as server:
        shown = server.request("GET", "/config").json()["settings"]["allowed_roots"]
        assert shown == [str(home.resolve())]
        assert server.request("POST", "/clear", json={"cwd": str(home)}).status_code == 200
        assert _ask(server.url, home, "hi").json()["answer"].startswith("served")
        above = server.request("POST", "/clear", json={"cwd": str(tmp_path / "data")})
        assert above.status_code == 403  # the named root only


def test_enqueue_refuses_a_transcript_that_is_not_a_regular_file(
    served: ServerProcess, fresh: Path, tmp_path: Path
) -> None:
    fifo = tmp_path / "transcript.jsonl"  # a FIFO: opening it for reading waits for a writer
    os.mkfifo(fifo)
    body = {"session_id": "s1", "transcript_path": str(fifo), "cwd": str(fresh)}
    try:
        response = loopback.post(f"{served.url}/api/enqueue", json=body, timeout=5)
    except httpx.ReadTimeout:
        _release_readers(fifo)  # so the server can still shut down
        raise
    assert response.status_code == 422, response.text
    assert "transcript" in _error(response)


def _release_readers(fifo: Path, for_s: float = 3.0) -> None:
    """Unblock server threads stuck opening `fifo`: a writer appears, then EOF, as often as
    one waits there (the server may open it more than once) during `for_s` seconds."""
    deadline = time.monotonic() + for_s
    while time.monotonic() < deadline:
        try:
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        except OSError:  # ENXIO: nobody is reading right now
            time.sleep(0.05)


def test_a_full_queue_is_429_and_every_admitted_question_is_kept(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider
) -> None:
    held = threading.Event()
    seen = 0

    def first_held(recorded: Recorded) -> Reply:
        nonlocal seen
        seen += 1  # the fake answers on one event loop thread
        return Text("held answer", hold=held) if seen == 1 else Text("quick answer")

    shared_fake.responder = first_held
    total = C.MAX_PENDING_QUESTIONS + 8
    refused = total - 1 - C.MAX_PENDING_QUESTIONS
    replies: list[httpx.Response | None] = [None] * total

    def ask(i: int) -> None:
        replies[i] = _ask(served.url, fresh, f"queued question {i}?")

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(total)]
    threads[0].start()
    shared_fake.wait_for_requests(1, timeout_s=60)  # the first question holds the only slot
    for thread in threads[1:]:
        thread.start()
    try:
        # However slowly a loaded machine starts the threads, the reply stays held until every
        # question has either been queued or refused.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            busy = [r for r in replies if r is not None and r.status_code == 429]
            pending = _stats(served.url, fresh).json()["queue"]["pending"]
            if len(busy) == refused and pending == C.MAX_PENDING_QUESTIONS:
                break
            time.sleep(0.05)  # polling the server's queue: the state is the event
    finally:
        held.set()
    for thread in threads:
        thread.join(timeout=60)
    statuses = [r.status_code if r is not None else None for r in replies]
    busy = [r for r in replies if r is not None and r.status_code == 429]
    assert statuses.count(200) + len(busy) == total, statuses
    assert len(busy) == refused, statuses
    assert "retry later" in _error(busy[0])
    stats = _stats(served.url, fresh).json()
    assert stats["questions_answered"] == statuses.count(200)
    assert stats["messages_retained"] == 2 * statuses.count(200)


def test_refused_input_loses_nothing_already_stored(served: ServerProcess, fresh: Path) -> None:
    assert _ask(served.url, fresh, "a question to keep?").status_code == 200
    before = _stats(served.url, fresh).json()
    _ask(served.url, fresh, "x" * (C.MAX_QUESTION_CHARS + 1))
    _ask(served.url, fresh, "q?", max_answer_tokens=-1)
    loopback.post(f"{served.url}/notify", content=b"{broken", headers=JSON, timeout=10)
    loopback.post(f"{served.url}/notify", json={"cwd": str(fresh), "events": [{"kind": "x"}]})
    after = _stats(served.url, fresh).json()
    for key in ("messages_retained", "questions_answered", "version", "file_contexts"):
        assert after[key] == before[key], key


# --- provider faults -------------------------------------------------------------------------
def test_a_rate_limit_is_retried_and_then_answered(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider
) -> None:
    shared_fake.script(Error.rate_limited(retry_after_s=0.05), Text("after the rate limit"))
    response = _ask(served.url, fresh, "rate limited?")
    assert response.status_code == 200, response.text
    assert response.json()["answer"] == "after the rate limit"
    assert len(shared_fake.requests) == 2


def test_repeated_500s_are_a_clear_error_and_the_workspace_answers_the_next_question(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider
) -> None:
    attempts = C.PROVIDER_MAX_RETRIES + 1
    shared_fake.script(*[Error(500, "api_error", "upstream exploded")] * attempts)
    failed = _ask(served.url, fresh, "will this fail?")
    assert failed.status_code == 502, failed.text
    message = _error(failed)
    assert "500" in message and "upstream exploded" in message
    assert f"gave up after {attempts} attempts" in message
    assert len(shared_fake.requests) == attempts
    answered = _ask(served.url, fresh, "and now?")
    assert answered.status_code == 200, answered.text
    assert answered.json()["answer"] == "shared answer"
    assert _stats(served.url, fresh).json()["messages_retained"] == 2


def test_a_malformed_provider_response_is_a_clear_error_and_the_workspace_recovers(
    served: ServerProcess, fresh: Path, shared_fake: FakeProvider
) -> None:
    shared_fake.script(Malformed())
    failed = _ask(served.url, fresh, "malformed?")
    assert failed.status_code == 502, failed.text
    assert "not a valid response" in _error(failed)
    assert failed.json()["kind"] == "ProviderBadResponse"
    assert _ask(served.url, fresh, "and now?").status_code == 200


def test_a_refused_connection_is_retried_then_a_clear_error(repo: Path, tmp_path: Path) -> None:
    closed = free_port()  # nothing listens there
    env = {"ANTHROPIC_API_KEY": "dummy-key", "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed}"}
    with AppServer(tmp_path / "data", env) as server:
        _warm(server.url, repo)
        failed = _ask(server.url, repo, "anyone there?")
        assert failed.status_code == 502, failed.text
        message = _error(failed)
        assert "could not connect" in message and str(closed) in message
        assert f"gave up after {C.PROVIDER_MAX_RETRIES + 1} attempts" in message
        assert _stats(server.url, repo).status_code == 200
        assert loopback.get(f"{server.url}/health", timeout=10).json()["status"] == "ok"


# --- durability ------------------------------------------------------------------------------
def test_kill_9_during_snapshot_writes_leaves_a_loadable_consistent_snapshot(
    fake: FakeProvider, tmp_path: Path
) -> None:
    held = {f"data/notes{i}.txt": f"note {i}\n" * 500 for i in range(4)}
    repo = make_repo(tmp_path / "repo", {**REPO_FILES, **held})
    fake.responder = lambda recorded: Text("a long answer. " * 600)  # ~9 KB a turn
    env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_CONCURRENCY": "serial"}
    data = tmp_path / "data"
    answered = 0
    lock = threading.Lock()
    with ServerProcess(data, env) as server:
        assert server.proc is not None
        events = [{"path": p, "kind": "read", "content": text} for p, text in held.items()]
        ensure_workspace(server.url, repo)
        warm = loopback.post(f"{server.url}/notify", json={"cwd": str(repo), "events": events})
        assert warm.json()["accepted"] == len(held), warm.text
        stop = threading.Event()

        def keep_asking(worker: int) -> None:
            nonlocal answered
            for i in range(200):
                if stop.is_set():
                    return
                try:
                    reply = _ask(server.url, repo, f"worker {worker} question {i}?")
                except httpx.HTTPError:
                    return  # the server died under us
                if reply.status_code == 200:
                    with lock:
                        answered += 1

        workers = [threading.Thread(target=keep_asking, args=(w,)) for w in range(3)]
        for worker in workers:
            worker.start()
        deadline = time.monotonic() + 30  # generous: CI machines are slow
        while answered < 10 and time.monotonic() < deadline:
            time.sleep(0.02)  # wait for snapshot writes to be under way
        delay = random.uniform(0.0, 0.7)  # a random moment among the snapshot writes
        time.sleep(delay)
        server.proc.kill()
        server.proc.wait(timeout=10)
        with lock:
            answered_before_kill = answered
        stop.set()
        for worker in workers:
            worker.join(timeout=30)
    assert answered_before_kill >= 10, delay
    snapshots = list((data / C.SNAPSHOT_DIR_NAME).glob(f"*{C.SNAPSHOT_SUFFIX}"))
    assert len(snapshots) == 1
    assert orjson.loads(snapshots[0].read_bytes())["format_version"] == C.SNAPSHOT_FORMAT_VERSION
    # The snapshot is on disk: the app loads it the same in process.
    with AppServer(data, env) as server:
        stats = _stats(server.url, repo).json()
        # Each answer is sent only after its snapshot write: none of them may be missing.
        assert stats["questions_answered"] >= answered_before_kill, delay
        assert stats["messages_retained"] == 2 * stats["questions_answered"]
        assert stats["file_contexts"]["loaded"] >= len(held)  # hashes persist, bytes do not
        assert _ask(server.url, repo, "after the crash?").status_code == 200
        after = _stats(server.url, repo).json()
        assert after["messages_retained"] == stats["messages_retained"] + 2
    assert not (data / C.SNAPSHOT_DIR_NAME / C.QUARANTINE_DIR_NAME).exists()


def test_corrupt_and_unknown_version_snapshots_are_quarantined_on_restart(
    fake: FakeProvider, tmp_path: Path
) -> None:
    corrupt = make_repo(tmp_path / "corrupt", REPO_FILES)
    future = make_repo(tmp_path / "future", REPO_FILES)
    data = tmp_path / "data"
    store = SnapshotStore(data / C.SNAPSHOT_DIR_NAME)
    store.directory.mkdir(parents=True)
    garbage = b'{"format_version": 1, "root": \x00\xff garbage'
    store.path_for(corrupt.resolve()).write_bytes(garbage)
    newer = {"format_version": C.SNAPSHOT_FORMAT_VERSION + 1, "root": str(future.resolve())}
    unknown = json.dumps(newer | {"saved_at": "", "state": {}}).encode()
    store.path_for(future.resolve()).write_bytes(unknown)
    fake.responder = lambda recorded: Text("fresh start")
    with AppServer(data, provider_env(fake, "anthropic")) as server:
        for repo in (corrupt, future):
            response = _stats(server.url, repo)
            assert response.status_code in (200, 404), response.text
            if response.status_code == 200:
                assert response.json()["messages_retained"] == 0
            _warm(server.url, repo)
            assert _ask(server.url, repo, "usable again?").status_code == 200
        quarantined = sorted(
            p.read_bytes() for p in (store.directory / C.QUARANTINE_DIR_NAME).iterdir()
        )
    assert quarantined == sorted([garbage, unknown])


def _read_whole_response(sock: socket.socket) -> bytes:
    """Read one HTTP response: headers and body may arrive in separate segments."""
    reply = b""
    while b"\r\n\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            return reply
        reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")[1:]
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        chunk = sock.recv(4096)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def test_a_slow_client_gets_408_and_the_server_stays_available(tmp_path: Path) -> None:
    env = {"LIVE_MEMORY_REQUEST_TIMEOUT_S": "1"}
    with (
        ServerProcess(tmp_path / "data", env) as server,
        socket.create_connection(("127.0.0.1", server.port), timeout=10) as slow,
    ):
        slow.sendall(
            b"POST /notify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 100\r\n\r\n{"cwd": '
        )
        assert server.request("GET", "/health").status_code == 200
        reply = _read_whole_response(slow)
        assert b" 408 " in reply.split(b"\r\n", 1)[0]
        assert b"LIVE_MEMORY_REQUEST_TIMEOUT_S" in reply
        data = tmp_path / "data"
        assert (data / "usage.sqlite3").stat().st_mode & 0o077 == 0


def test_a_long_single_token_question_and_fact_leave_the_server_answering(
    repo: Path, tmp_path: Path
) -> None:
    # The fact keys' patterns were quadratic on one token and held the interpreter lock: a
    # 20 KB token stalled /health 7 s, a 60 KB fact timed it out, a 100 KB one took minutes.
    held = threading.Event()  # the question waits at the model: /health is asked during it
    stop = threading.Event()
    probes: list[int] = []

    def probe(url: str) -> None:
        while not stop.is_set():  # a stalled server fails here (read timeout), not by timing
            probes.append(loopback.get(f"{url}/health", timeout=30).status_code)

    with FakeProvider() as fake:
        env = provider_env(fake, "anthropic") | {"LIVE_MEMORY_MAX_QUESTION_CHARS": "200000"}
        with ServerProcess(tmp_path / "data", env) as server:
            fake.responder = lambda recorded: Text("warm")
            _warm(server.url, repo)
            before = len(fake.requests)
            fake.responder = lambda recorded: Text("answered", hold=held)
            replies: list[httpx.Response] = []
            asking = threading.Thread(
                target=lambda: replies.append(_ask(server.url, repo, "aA_1" * 25_000))
            )
            prober = threading.Thread(target=probe, args=(server.url,))
            prober.start()
            asking.start()
            try:
                # Its keys (symbol look-up, fact search) are taken before the model is called.
                fake.wait_for_requests(before + 1, timeout_s=120)
                fact = {"cwd": str(repo), "facts": [{"text": "a" * 60_000}]}
                imported = loopback.post(f"{server.url}/api/import", json=fact, timeout=120)
                assert imported.status_code == 200, imported.text
                assert loopback.get(f"{server.url}/health", timeout=30).status_code == 200
                assert asking.is_alive()  # all of it while the question was in flight
            finally:
                held.set()
                asking.join(timeout=120)
                stop.set()
                prober.join(timeout=60)
    assert [r.status_code for r in replies] == [200]
    assert probes and set(probes) == {200}
