"""Which process answers on the port: a client makes sure it is its own user's server before it
sends a bearer token or file contents.

Any local user can listen on LIVE_MEMORY_PORT while this user's server is not running (port
squatting); whatever listens there would receive the token and every teed file. So:

1. At start the server draws a random secret and publishes it with its pid and port in
   `server-<port>.json` in the user's private identity directory (`identity_dir`: the
   directory 0700, the file 0600, both owned by the user); it is withdrawn at a clean stop.
2. A client connects and first sends `GET /identity` with a fresh `X-Live-Memory-Challenge`
   (32 hex digits) and nothing else: no token, no body. The server answers `{"proof", "pid"}`,
   proof = HMAC-SHA256(secret, label, nonce, both ends of the TCP connection).
3. Only when the proof checks out does the client send its request, on that same connection.

Binding the proof to the connection's two ends (the client's address and port, the server's)
stops a relay: a squatter that forwards the challenge to the real server on another address
gets a proof for *its own* connection, which the client's check refuses. With
LIVE_MEMORY_TOKEN the answer also carries `token_proof`, an HMAC of the nonce keyed by the
token, for a client that has no running server of its own published (a server in a container
or on another machine: its file is not here, and a port forward or NAT changes the ends); it
stops a squatter, not a relay (docs/SECURITY.md).

The plugin's hooks check the same way with the standard library (plugin/scripts/
server-identity.py; a test keeps the two equal).
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import logging
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from live_memory.atomic_file import write_atomically

__all__ = [
    "CHALLENGE_HEADER",
    "IDENTITY_PATH",
    "ServerIdentity",
    "expected_answer",
    "identity_dir",
    "identity_file",
    "new_nonce",
    "proof",
    "read_published",
    "token_proof",
    "who_is_not_ours",
]

logger = logging.getLogger(__name__)

IDENTITY_PATH: Final = "/identity"
CHALLENGE_HEADER: Final = "X-Live-Memory-Challenge"
NONCE_HEX_CHARS: Final = 32
_LABEL: Final = b"live-memory identity v1"
_SECRET_BYTES: Final = 32
_FILE_MAX_BYTES: Final = 4096


def identity_dir(environ: Mapping[str, str]) -> Path:
    """`$XDG_RUNTIME_DIR/live-memory`, else `/run/user/<uid>/live-memory` (what systemd gives
    a user's sessions and services alike), else `$HOME/.local/state/live-memory`."""
    runtime = environ.get("XDG_RUNTIME_DIR", "").strip()
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / "live-memory"
    run_user = Path(f"/run/user/{os.getuid()}")
    if run_user.is_dir():
        return run_user / "live-memory"
    home = environ.get("HOME", "").strip() or os.path.expanduser("~")
    return Path(home) / ".local" / "state" / "live-memory"


def identity_file(environ: Mapping[str, str], port: int) -> Path:
    return identity_dir(environ) / f"server-{port}.json"


def new_nonce() -> str:
    return secrets.token_hex(NONCE_HEX_CHARS // 2)


def _host(address: str) -> str:
    """`::ffff:127.0.0.1` (an IPv4 client of a dual-stack socket) as `127.0.0.1`."""
    return address.removeprefix("::ffff:").lower()


def proof(key: bytes, nonce: str, client: tuple[str, int], server: tuple[str, int]) -> str:
    """HMAC-SHA256 over the label, the nonce and both ends of the connection, in hex."""
    ends = f"{_host(client[0])} {client[1]} {_host(server[0])} {server[1]}"
    message = b"\0".join((_LABEL, nonce.encode("ascii"), ends.encode("ascii")))
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def token_proof(token: bytes, nonce: str) -> str:
    """HMAC-SHA256 of the label and the nonce keyed by the token, in hex (no connection ends)."""
    return hmac.new(
        token, b"\0".join((_LABEL, b"token", nonce.encode("ascii"))), "sha256"
    ).hexdigest()


@dataclass(frozen=True, slots=True)
class Published:
    """What an identity file says: the server's pid and its secret."""

    pid: int
    secret: bytes


def read_published(path: Path) -> Published | None:
    """The identity file at `path` when it is this user's own (a regular file, not a link,
    owned by this user, no group or other permissions), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None
        raw = os.read(fd, _FILE_MAX_BYTES)
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        data = json.loads(raw)
        return Published(pid=int(data["pid"]), secret=bytes.fromhex(data["secret"]))
    except (ValueError, TypeError, KeyError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # it exists, someone else's
    return True


def expected_answer(
    published: Published | None,
    token: str | None,
    nonce: str,
    client: tuple[str, int],
    server: tuple[str, int],
) -> tuple[str, str] | None:
    """The field and value a server's answer must hold to be ours: the connection-bound proof
    when this user's server is published and running; else, with a token, the token's; else
    None (nothing can be checked: send nothing)."""
    if published is not None and _alive(published.pid):
        return "proof", proof(published.secret, nonce, client, server)
    if token:
        return "token_proof", token_proof(token.encode(), nonce)
    return None


def who_is_not_ours(authority: str, path: Path, published: Published | None) -> str:
    """The refusal a client gives when the process on `authority` is not proven to be ours."""
    if published is None:
        why = (
            f"no identity of yours is published for it ({path} is missing or not yours): "
            "your server is not running, or runs with another XDG_RUNTIME_DIR / HOME"
        )
    else:
        alive = "is running" if _alive(published.pid) else "is not running"
        why = f"it could not prove the identity in {path}; the server that wrote it, pid "
        why += f"{published.pid}, {alive}"
    return f"the process on {authority} is not your Live Memory server ({why}); nothing was sent"


class ServerIdentity:
    """The server's secret, its answer to a challenge, and the file that publishes it."""

    def __init__(self, token: str | None = None, secret: bytes | None = None) -> None:
        self._secret = secret or secrets.token_bytes(_SECRET_BYTES)
        self._token = token.encode() if token else None
        self.pid = os.getpid()

    def answer(
        self, nonce: str, client: tuple[str, int], server: tuple[str, int]
    ) -> dict[str, object] | None:
        """The JSON answer to a challenge, or None when the nonce is not 32 hex digits."""
        if len(nonce) != NONCE_HEX_CHARS or not all(c in "0123456789abcdef" for c in nonce):
            return None
        body: dict[str, object] = {"proof": proof(self._secret, nonce, client, server)}
        if self._token is not None:
            body["token_proof"] = token_proof(self._token, nonce)
        body["pid"] = self.pid
        return body

    def publish(self, environ: Mapping[str, str], port: int) -> Path | None:
        """Write `server-<port>.json`; None (logged) when the directory is not privately ours:
        clients then refuse this server rather than trust a file others could replace."""
        path = identity_file(environ, port)
        directory = path.parent
        try:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = directory.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                logger.error("not publishing the server identity: %s is not yours", directory)
                return None
            if info.st_mode & 0o077:
                directory.chmod(0o700)
            record = {"pid": self.pid, "port": port, "secret": self._secret.hex()}
            write_atomically(path, json.dumps(record).encode(), sync=False)
        except OSError as exc:
            logger.error("cannot publish the server identity at %s: %s", path, exc)
            return None
        return path

    def withdraw(self, path: Path) -> None:
        """Remove the file unless another server has replaced it since."""
        published = read_published(path)
        if published is not None and hmac.compare_digest(published.secret, self._secret):
            with contextlib.suppress(OSError):
                path.unlink()
