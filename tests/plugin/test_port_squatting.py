"""Port squatting: whatever listens on LIVE_MEMORY_PORT gets the token and the teed files only
if it proves it is this user's own server (live_memory/server_identity.py).

Every client is run for real (the hook scripts as Claude Code runs them, the CLI) against (a)
the real server, (b) a squatter: a real HTTP server on loopback that logs what it receives and
forges whatever it can, and (c) a relay that forwards to the real server.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.server_identity import ServerIdentity, identity_file
from tests.cli.conftest import cli
from tests.plugin.capture_server import CaptureServer, Seen
from tests.plugin.conftest import HookWorld, hook_payloads, run_script
from tests.support.app_server import AppServer

TOKEN = "squat-test-token-7f3a9c"
CONTENT = "hello from input.txt: PRIVATE-CONTENT-b41d\n"


@pytest.fixture(scope="module")
def real_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    data = tmp_path_factory.mktemp("server-data")
    with AppServer(data, {"LIVE_MEMORY_TOKEN": TOKEN}) as server:
        yield server


@pytest.fixture
def hooks(world: HookWorld) -> HookWorld:
    (world.project / "input.txt").write_text(CONTENT)
    world.env["LIVE_MEMORY_TOKEN"] = TOKEN
    return world


def _forger(planted: Path) -> CaptureServer:
    """A squatter that answers everything with success, forges proofs and names a config
    file for the CLI to write."""

    def respond(seen: Seen) -> tuple[int, object]:
        if seen.path == "/identity":
            return 200, {"proof": "0" * 64, "token_proof": "0" * 64, "pid": os.getpid()}
        banner = "live-memory: all good"
        return 200, {"accepted": 1, "config_file": str(planted), "banner": banner, "settings": {}}

    return CaptureServer(respond=respond, proves=False)


def _run_every_client(world: HookWorld, port: int) -> dict[str, str]:
    """Each hook, the status line, a slash command and the CLI against `port`: what each
    printed (stdout + stderr)."""
    env = world.at(port)
    payloads = hook_payloads(world.project)
    said: dict[str, str] = {}
    for name in ("PostToolUse(Read)", "PostToolUse(Write)"):
        ran = run_script("notify.py", json.dumps(payloads[name]), env)
        assert ran.returncode == 0 and ran.stdout == ""
        said[name] = ran.stderr
    stop = {
        "hook_event_name": "Stop",
        "cwd": str(world.project),
        "session_id": "s1",
        "transcript_path": str(world.project / "input.txt"),
    }
    said["Stop"] = run_script("notify.py", json.dumps(stop), env).stderr
    said["SessionStart"] = run_script(
        "session-start.py", json.dumps(payloads["SessionStart"]), env
    ).stdout
    said["statusline"] = run_script("statusline.py", "{}", env).stdout
    said["/live-memory-stats"] = run_script("live-memory-command.py", "", env, ("stats",)).stdout
    cli_env = {**env, "LIVE_MEMORY_DATA_DIR": str(world.data / "cli-data")}
    status = cli(["status", "--server", f"http://127.0.0.1:{port}"], cli_env)
    said["cli status"] = f"{status.code} {status.err}"
    config = cli(["config", "set", "model=m1", "--server", f"http://127.0.0.1:{port}"], cli_env)
    said["cli config set"] = f"{config.code} {config.out} {config.err}"
    return said


def _assert_only_challenges(raw: bytes) -> None:
    assert TOKEN.encode() not in raw
    assert b"PRIVATE-CONTENT" not in raw
    assert b"line 2 edited" not in raw  # the written file's bytes
    requests = [chunk for chunk in raw.split(b"\r\n\r\n") if chunk.strip()]
    assert requests and all(r.startswith(b"GET /identity HTTP/1.1\r\n") for r in requests), raw


def test_every_client_works_against_the_real_server(
    hooks: HookWorld, real_server: AppServer
) -> None:
    assert real_server.port is not None
    said = _run_every_client(hooks, real_server.port)
    assert said["PostToolUse(Read)"] == said["PostToolUse(Write)"] == said["Stop"] == ""
    assert not hooks.spool_file.exists()  # every body delivered
    stats = real_server.request(
        "GET",
        "/stats",
        params={"cwd": str(hooks.project)},
        headers={"Authorization": f"Bearer {TOKEN}"},
    )
    assert stats.status_code == 200
    assert "not your" not in json.dumps(said)
    assert said["statusline"].startswith("live-memory ") and "down" not in said["statusline"]
    assert said["cli status"].startswith("0 ")
    assert said["cli config set"].startswith("0 wrote ")


@pytest.mark.parametrize("stale_identity", [False, True], ids=["no-identity", "stale-identity"])
def test_a_squatter_never_receives_the_token_or_file_contents_and_is_refused(
    hooks: HookWorld, tmp_path: Path, stale_identity: bool
) -> None:
    planted = tmp_path / "autostart" / "planted.desktop"
    with _forger(planted) as squatter:
        if stale_identity:  # the user's server ran on this port and died
            assert ServerIdentity().publish(os.environ, squatter.port) is not None
        said = _run_every_client(hooks, squatter.port)
        seen = list(squatter.requests)
        identity_file(os.environ, squatter.port).unlink(missing_ok=True)
    assert seen, "the clients never tried"
    for request in seen:
        assert (request.method, request.path, request.body) == ("GET", "/identity", b"")
        assert "authorization" not in request.headers
        assert TOKEN not in json.dumps([request.headers, request.query])
    refusal = f"the process on 127.0.0.1:{squatter.port} is not your Live Memory server"
    for client in ("PostToolUse(Read)", "PostToolUse(Write)", "Stop", "cli status"):
        assert refusal in said[client], client
    assert refusal in json.loads(said["SessionStart"])["systemMessage"]
    assert said["statusline"] == "live-memory: not your server on its port\n"
    assert refusal in said["/live-memory-stats"]
    # The bodies wait in the private spool for the user's own server.
    assert "PRIVATE-CONTENT" in hooks.spool_file.read_text()
    # config set writes its own file, never the one the squatter names.
    assert not planted.exists() and not planted.parent.exists()
    assert (hooks.data / "cli-data" / "config.json").exists()
    assert refusal in said["cli config set"]
    if stale_identity:
        assert "pid" in said["PostToolUse(Read)"]


class _Relay:
    """A squatter that forwards every byte to the real server and logs what clients send."""

    def __init__(self, target_port: int) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.target_port = target_port
        self.seen = bytearray()
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            for source, sink, log in ((client, upstream, True), (upstream, client, False)):
                threading.Thread(target=self._pump, args=(source, sink, log), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, log: bool) -> None:
        try:
            while data := source.recv(65536):
                if log:
                    with self._lock:
                        self.seen += data
                sink.sendall(data)
            sink.shutdown(socket.SHUT_WR)
        except OSError:
            pass

    def close(self) -> None:
        self.listener.close()


def test_a_relay_to_the_real_server_cannot_pass_its_proof_on(
    hooks: HookWorld, real_server: AppServer
) -> None:
    # The worst case: the relay's port maps to the real server's identity file (as when the
    # real server listens on [::1]:7711 and the squatter on 127.0.0.1:7711). The real server
    # answers the relayed challenge, but for the relay's connection, not the client's.
    assert real_server.port is not None
    relay = _Relay(real_server.port)
    mirrored = identity_file(os.environ, relay.port)
    shutil.copyfile(identity_file(os.environ, real_server.port), mirrored)
    mirrored.chmod(0o600)
    try:
        env = hooks.at(relay.port)
        payload = hook_payloads(hooks.project)["PostToolUse(Read)"]
        ran = run_script("notify.py", json.dumps(payload), env)
        status = cli(["status", "--server", f"http://127.0.0.1:{relay.port}"], env)
    finally:
        relay.close()
        mirrored.unlink()
    assert "could not prove the identity" in ran.stderr
    assert status.code == 1 and "is not your Live Memory server" in status.err
    with relay._lock:
        _assert_only_challenges(bytes(relay.seen))


def test_a_client_with_the_token_reaches_its_server_through_a_port_forward(
    hooks: HookWorld, real_server: AppServer
) -> None:
    # A server in a container (`docker run -p 127.0.0.1:7711:7711`): no identity file of it on
    # this side, and the forward changes the connection's ends; the token's proof still holds.
    assert real_server.port is not None
    forward = _Relay(real_server.port)
    try:
        env = hooks.at(forward.port)
        payload = hook_payloads(hooks.project)["PostToolUse(Read)"]
        ran = run_script("notify.py", json.dumps(payload), env)
        status = cli(["status", "--server", f"http://127.0.0.1:{forward.port}"], env)
        tokenless = cli(
            ["status", "--server", f"http://127.0.0.1:{forward.port}"],
            {k: v for k, v in env.items() if k != "LIVE_MEMORY_TOKEN"},
        )
    finally:
        forward.close()
    assert ran.stderr == "" and not hooks.spool_file.exists()
    assert status.code == 0, status.err
    assert tokenless.code == 1 and "no identity of yours is published" in tokenless.err
