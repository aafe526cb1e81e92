"""live_memory/server_identity.py: the published identity, its answer, and the plugin's twin."""

from __future__ import annotations

import importlib.util
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from live_memory.server_identity import (
    CHALLENGE_HEADER,
    ServerIdentity,
    identity_file,
    new_nonce,
    proof,
    read_published,
    token_proof,
)
from tests.support.app_server import AppServer

REPO = Path(__file__).resolve().parents[1]


def _plugin_identity() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "plugin_server_identity", REPO / "plugin" / "scripts" / "server-identity.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_identity_is_published_privately_and_withdrawn_only_by_its_writer(
    tmp_path: Path,
) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    first, second = ServerIdentity(), ServerIdentity()
    path = first.publish(env, 7711)
    assert path == tmp_path / "live-memory" / "server-7711.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    published = read_published(path)
    assert published is not None and published.pid == os.getpid()
    assert second.publish(env, 7711) == path  # a newer server on the port replaces it
    first.withdraw(path)
    assert path.exists()  # not the old server's to remove any more
    second.withdraw(path)
    assert not path.exists()


def test_an_identity_file_others_could_replace_is_not_trusted(tmp_path: Path) -> None:
    env = {"XDG_RUNTIME_DIR": str(tmp_path)}
    path = ServerIdentity().publish(env, 7711)
    assert path is not None
    path.chmod(0o644)
    assert read_published(path) is None
    path.chmod(0o600)
    link = path.with_name("server-7712.json")
    link.symlink_to(path)
    assert read_published(link) is None
    group_open = tmp_path / "open"
    group_open.mkdir(mode=0o777)
    group_open.chmod(0o777)
    (group_open / "live-memory").mkdir(mode=0o777)
    # The server tightens a directory of its own before it writes there.
    assert ServerIdentity().publish({"XDG_RUNTIME_DIR": str(group_open)}, 1) is not None
    assert (group_open / "live-memory").stat().st_mode & 0o777 == 0o700


def test_the_plugins_check_agrees_with_the_package(tmp_path: Path) -> None:
    plugin = _plugin_identity()
    environs = [
        {"XDG_RUNTIME_DIR": str(tmp_path)},
        {"XDG_RUNTIME_DIR": "relative/ignored", "HOME": str(tmp_path)},
        {"HOME": str(tmp_path)},
    ]
    for env in environs:
        assert plugin.identity_file(env, 7711) == str(identity_file(env, 7711))
    nonce = new_nonce()
    for client, server in [
        (("127.0.0.1", 50123), ("127.0.0.1", 7711)),
        (("::ffff:127.0.0.1", 50123), ("::FFFF:127.0.0.1", 7711)),
        (("::1", 1), ("::1", 2)),
    ]:
        assert plugin.proof(b"k", nonce, client, server) == proof(b"k", nonce, client, server)
    assert plugin.token_proof(b"t0k", nonce) == token_proof(b"t0k", nonce)
    path = ServerIdentity().publish({"XDG_RUNTIME_DIR": str(tmp_path)}, 9)
    assert path is not None
    published = read_published(path)
    assert published is not None
    assert plugin.read_published(str(path)) == (published.pid, published.secret)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AppServer]:
    with AppServer(tmp_path_factory.mktemp("data"), {"LIVE_MEMORY_TOKEN": "t0k"}) as running:
        yield running


def test_the_challenge_is_answered_without_the_token_and_bound_to_the_connection(
    server: AppServer,
) -> None:
    assert server.port is not None
    published = read_published(identity_file(os.environ, server.port))
    assert published is not None
    nonce = new_nonce()
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(
            f"GET /identity HTTP/1.1\r\nHost: 127.0.0.1\r\n{CHALLENGE_HEADER}: {nonce}\r\n"
            "Connection: close\r\n\r\n".encode()
        )
        reply = b""
        while chunk := sock.recv(4096):
            reply += chunk
        ends = sock.getsockname()[:2], sock.getpeername()[:2]
    assert reply.startswith(b"HTTP/1.1 200")
    answer = json.loads(reply.partition(b"\r\n\r\n")[2])
    assert answer["proof"] == proof(published.secret, nonce, *ends)
    assert answer["token_proof"] == token_proof(b"t0k", nonce)
    assert answer["pid"] == os.getpid()


@pytest.mark.parametrize("nonce", ["", "abc", "G" * 32, "A" * 32, "0" * 33])
def test_a_malformed_challenge_is_refused_naming_the_header(server: AppServer, nonce: str) -> None:
    reply = server.request("GET", "/identity", headers={CHALLENGE_HEADER: nonce})
    assert reply.status_code == 422
    assert CHALLENGE_HEADER in reply.json()["error"]
