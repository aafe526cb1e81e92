"""The hooks' check that the process on LIVE_MEMORY_PORT is this user's own Live Memory server,
made before they send it a token or file contents (live_memory/server_identity.py describes
the protocol; a test keeps the two equal). Standard library only, imported by the plugin's
scripts from their own directory.

`open_verified` connects, sends `GET /identity` with a fresh challenge and nothing else, and
returns the connection once the answer proves the server holds the secret this user's server
published (or, for a client with LIVE_MEMORY_TOKEN, the token); the caller then sends its
request on that same connection. Anything else raises NotOurServer; nothing has been sent.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import socket
import stat
from collections.abc import Mapping

IDENTITY_PATH = "/identity"
CHALLENGE_HEADER = "X-Live-Memory-Challenge"
LABEL = b"live-memory identity v1"
REPLY_MAX_BYTES = 8192
FILE_MAX_BYTES = 4096


def mark_fired(environ: Mapping[str, str], agent: str) -> None:
    """Touch `<data dir>/fired/<agent>`: `live-memory connect --list` shows when an agent's
    hooks last ran. Never fails the hook."""
    base = environ.get("CLAUDE_PLUGIN_DATA", "").strip()
    home = environ.get("HOME") or os.path.expanduser("~")
    root = base or os.path.join(home, ".local", "share", "live-memory")
    stamp = os.path.join(root, "fired", os.path.basename(agent) or "unknown")
    try:
        os.utime(stamp)
    except FileNotFoundError:
        try:
            os.makedirs(os.path.dirname(stamp), exist_ok=True)
            os.close(os.open(stamp, os.O_WRONLY | os.O_CREAT, 0o600))
        except OSError:
            pass
    except OSError:
        pass


class NotOurServer(Exception):
    """What listens did not prove it is this user's server; the message says so."""


def address(environ: Mapping[str, str]) -> tuple[str, int, str]:
    """(host, port, authority) of LIVE_MEMORY_HOST/PORT; a wildcard bind is reached on
    loopback."""
    host = environ.get("LIVE_MEMORY_HOST", "").strip() or "127.0.0.1"
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(host, host).strip("[]")
    try:
        port = int(environ.get("LIVE_MEMORY_PORT", "").strip() or 7711)
    except ValueError:
        port = 7711
    shown = f"[{host}]" if ":" in host else host
    return host, port, f"{shown}:{port}"


def identity_file(environ: Mapping[str, str], port: int) -> str:
    runtime = environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime):
        directory = os.path.join(runtime, "live-memory")
    elif os.path.isdir(f"/run/user/{os.getuid()}"):
        directory = f"/run/user/{os.getuid()}/live-memory"
    else:
        home = environ.get("HOME", "").strip() or os.path.expanduser("~")
        directory = os.path.join(home, ".local", "state", "live-memory")
    return os.path.join(directory, f"server-{port}.json")


def read_published(path: str) -> tuple[int, bytes] | None:
    """(pid, secret) of this user's own identity file (regular, not a link, owner-only)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        data = json.loads(os.read(fd, FILE_MAX_BYTES))
        return int(data["pid"]), bytes.fromhex(data["secret"])
    except (OSError, ValueError, TypeError, KeyError):
        return None
    finally:
        os.close(fd)


def _host(text: str) -> str:
    return text[7:].lower() if text.startswith("::ffff:") else text.lower()


def proof(key: bytes, nonce: str, client: tuple[str, int], server: tuple[str, int]) -> str:
    ends = f"{_host(client[0])} {client[1]} {_host(server[0])} {server[1]}"
    message = b"\0".join((LABEL, nonce.encode("ascii"), ends.encode("ascii")))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def token_proof(token: bytes, nonce: str) -> str:
    message = b"\0".join((LABEL, b"token", nonce.encode("ascii")))
    return hmac.new(token, message, hashlib.sha256).hexdigest()


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, someone else's
    return True


def expected_answer(
    published: tuple[int, bytes] | None,
    token: str,
    nonce: str,
    client: tuple[str, int],
    server: tuple[str, int],
) -> tuple[str, str] | None:
    """(field, value) the answer must hold: the connection-bound proof when this user's server
    is published and running; else, with a token, the token's; else None: send nothing."""
    if published is not None and alive(published[0]):
        return "proof", proof(published[1], nonce, client, server)
    if token:
        return "token_proof", token_proof(token.encode(), nonce)
    return None


def not_ours(authority: str, path: str, published: tuple[int, bytes] | None) -> str:
    if published is None:
        why = (
            f"no identity of yours is published for it ({path} is missing or not yours): "
            "your server is not running, or runs with another XDG_RUNTIME_DIR / HOME"
        )
    else:
        running = "is running" if alive(published[0]) else "is not running"
        why = f"it could not prove the identity in {path}; the server that wrote it, pid "
        why += f"{published[0]}, {running}"
    return f"the process on {authority} is not your Live Memory server ({why}); nothing was sent"


def _answer(sock: socket.socket) -> dict[str, object] | None:
    """The JSON body of a 200 answer read to its Content-Length (the connection stays open
    for the real request), or None."""
    reply = b""
    while b"\r\n\r\n" not in reply and len(reply) < REPLY_MAX_BYTES:
        chunk = sock.recv(4096)
        if not chunk:
            return None
        reply += chunk
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = lines[0].split()
    length = -1
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            length = int(value.strip())
    if len(status) < 2 or status[1] != b"200" or not 0 <= length <= REPLY_MAX_BYTES:
        return None
    while len(body) < length:
        chunk = sock.recv(length - len(body))
        if not chunk:
            return None
        body += chunk
    if len(body) != length:  # more than the answer: not our server's
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def open_verified(
    environ: Mapping[str, str], token: str, timeout_s: float
) -> tuple[socket.socket, str]:
    """(a connection to our own server, its authority). OSError when nothing answers (the
    caller's "down"); NotOurServer when something answers but could not prove it is ours."""
    host, port, authority = address(environ)
    sock = socket.create_connection((host, port), timeout=timeout_s)
    try:
        nonce = os.urandom(16).hex()
        sock.sendall(
            f"GET {IDENTITY_PATH} HTTP/1.1\r\nHost: {authority}\r\n"
            f"{CHALLENGE_HEADER}: {nonce}\r\n\r\n".encode("latin-1")
        )
        answer = _answer(sock)
        client, server = sock.getsockname()[:2], sock.getpeername()[:2]
        path = identity_file(environ, port)
        published = read_published(path)
        wanted = expected_answer(published, token, nonce, client, server)
        given = answer.get(wanted[0]) if answer is not None and wanted is not None else None
        if wanted is None or not isinstance(given, str):
            raise NotOurServer(not_ours(authority, path, published))
        if not hmac.compare_digest(given, wanted[1]):
            raise NotOurServer(not_ours(authority, path, published))
    except BaseException:
        sock.close()
        raise
    return sock, authority


def request(
    environ: Mapping[str, str],
    method: str,
    path: str,
    *,
    body: bytes | None = None,
    headers: Mapping[str, str] | None = None,
    timeout_s: float,
) -> tuple[int, bytes]:
    """(status, body) of one request on a verified connection; the token is added here.
    OSError when the server is down or cut the connection; NotOurServer as above."""
    import http.client  # noqa: PLC0415 (~30 ms: only the scripts that read answers pay it)

    token = environ.get("LIVE_MEMORY_TOKEN", "").strip()
    sock, _ = open_verified(environ, token, timeout_s)
    host, port, _ = address(environ)
    connection = http.client.HTTPConnection(host, port, timeout=timeout_s)
    connection.sock = sock  # the verified connection: never a fresh one
    sent = dict(headers or {})
    if token:
        sent["Authorization"] = f"Bearer {token}"
    if body is not None:
        sent["Content-Type"] = "application/json"
    try:
        connection.request(method, path, body=body, headers=sent)
        response = connection.getresponse()
        return response.status, response.read()
    except http.client.HTTPException as exc:
        raise OSError(f"bad answer from {host}:{port}: {exc}") from exc
    finally:
        connection.close()
