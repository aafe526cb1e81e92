"""A small HTTP client for a running `live-memory serve`, over the standard library.

The CLI talks to the server only through this module, so the three ways a call can go wrong
map onto the CLI's exit codes in one place:

    CommandFailed               exit 1 unless said otherwise
    ├── ServerDown              nothing listens at the URL (exit 3)
    ├── ServerRejected          the server answered 4xx or 5xx (exit 1); `.status`, `.detail`
    ├── ServerUnreachable       the server did not answer in time or spoke garbage (exit 1)
    └── NotOurServer            what listens is not this user's server (exit 1): nothing sent

Every request goes on a connection whose server first proved it is this user's own (GET
/identity, live_memory/server_identity.py): the token and the body follow only then, on that
same connection.
"""

from __future__ import annotations

import errno
import hmac
import http.client
import json
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final
from urllib.parse import urlencode, urlsplit

from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.config import VARIABLES, env_name
from live_memory.config import constants as C
from live_memory.errors import ConfigError
from live_memory.server_identity import (
    CHALLENGE_HEADER,
    IDENTITY_PATH,
    expected_answer,
    identity_file,
    new_nonce,
    read_published,
    who_is_not_ours,
)

__all__ = [
    "NotOurServer",
    "Reply",
    "ServerClient",
    "ServerDown",
    "ServerRejected",
    "ServerUnreachable",
    "checked_server_url",
    "default_server_url",
]

_DOWN_ERRNOS: Final = frozenset(
    {errno.ECONNREFUSED, errno.ECONNRESET, errno.EHOSTUNREACH, errno.ENETUNREACH}
)
_ERROR_BODY_MAX: Final = 500
_IDENTITY_REPLY_MAX: Final = 4096
_CUT_OFF_ERRNOS: Final = frozenset({errno.EPIPE, errno.ECONNRESET})
_CUT_OFF_MIN_BYTES: Final = 64 * 1024
"""A write cut off under a body at least this large is the server's body limit, not a crash."""


class ServerDown(CommandFailed):
    """Nothing answers at the server URL."""

    def __init__(self, url: str) -> None:
        super().__init__(
            f"the server is not running at {url}; start it with `live-memory serve` "
            "(or keep one running: `live-memory install-service`)",
            ExitCode.SERVER_DOWN,
        )
        self.url = url


class ServerRejected(CommandFailed):
    """The server answered with an HTTP error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{message} (HTTP {status})", ExitCode.FAILED)
        self.status = status
        self.detail = message


class ServerUnreachable(CommandFailed):
    """The server accepted the connection but gave no usable answer."""


class NotOurServer(CommandFailed):
    """What listens at the URL did not prove it is this user's server; nothing was sent."""


@dataclass(frozen=True, slots=True)
class Reply:
    """A successful (2xx) answer."""

    status: int
    content_type: str
    body: bytes

    @property
    def is_json(self) -> bool:
        return self.content_type.split(";")[0].strip().endswith("json")

    def json(self) -> object:
        """The body parsed as JSON; raises ServerUnreachable when it is not JSON."""
        try:
            return json.loads(self.body)
        except ValueError as exc:
            raise ServerUnreachable(f"server sent a body that is not JSON: {exc}") from exc

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def default_server_url(environ: Mapping[str, str]) -> str:
    """`http://$LIVE_MEMORY_HOST:$LIVE_MEMORY_PORT`, with a wildcard bind reached on loopback."""
    host = environ.get("LIVE_MEMORY_HOST", "").strip() or C.DEFAULT_HOST
    port = environ.get("LIVE_MEMORY_PORT", "").strip() or str(C.DEFAULT_PORT)
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"http://{host}:{port}"


def checked_server_url(url: str, environ: Mapping[str, str], *, given: bool) -> str:
    """`url` if a client can talk to it; else CommandFailed (exit 2) naming what set it:
    `--server` when `given`, else the LIVE_MEMORY_HOST / LIVE_MEMORY_PORT variable at fault."""
    try:
        parts = urlsplit(url)
        port = parts.port  # raises ValueError on a port that is no number or out of range
        problem = None
        if parts.scheme not in ("http", "https") or not parts.hostname:
            problem = "it must look like http://HOST:PORT"
        elif port is None and parts.netloc.endswith(":"):
            problem = "its port is empty"
        elif not url.isprintable() or any(ch.isspace() for ch in url):
            problem = "it must not contain spaces or control characters"
    except ValueError as exc:  # urllib's words: "Port out of range", "Invalid IPv6 URL"
        port_fault = "port" in str(exc).lower()
        problem = "its port must be a number 1-65535" if port_fault else f"{exc}".lower()
    if problem is None:
        return url
    if not given:
        for key in ("port", "host"):  # the variable's own message: `must be 1-65535, got …`
            raw = environ.get(env_name(key), "").strip()
            try:
                if raw:
                    VARIABLES[key](raw, env_name(key))
            except ConfigError as exc:
                raise CommandFailed(str(exc), ExitCode.USAGE) from exc
    where = "--server" if given else "the server URL from LIVE_MEMORY_HOST / LIVE_MEMORY_PORT"
    raise CommandFailed(f"{where} {url!r} is not a usable URL: {problem}", ExitCode.USAGE)


class ServerClient:
    """Calls one server; every call is bounded by a timeout and made on a verified connection.

    `environ` locates the server's published identity (XDG_RUNTIME_DIR, HOME)."""

    def __init__(
        self,
        base_url: str,
        token: str | None,
        timeout_s: float,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._token = token or None
        self._timeout_s = timeout_s
        self._environ = environ or {}
        parts = urlsplit(self.base_url)
        self._host = parts.hostname or C.DEFAULT_HOST
        self._port = parts.port or C.DEFAULT_PORT

    def auth_headers(self) -> dict[str, str]:
        """The headers that authenticate a request to this server (for another HTTP client)."""
        return {"Authorization": f"Bearer {self._token}"} if self._token else {}

    def get(
        self, path: str, params: Mapping[str, str] | None = None, timeout_s: float | None = None
    ) -> Reply:
        query = f"?{urlencode(dict(params))}" if params else ""
        return self._send("GET", path + query, None, timeout_s)

    def post(self, path: str, body: object, timeout_s: float | None = None) -> Reply:
        return self._send("POST", path, json.dumps(body).encode(), timeout_s)

    def _send(self, method: str, path: str, data: bytes | None, timeout_s: float | None) -> Reply:
        headers = {"Accept": "application/json, text/plain"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        timeout = self._timeout_s if timeout_s is None else timeout_s
        connection = self._verified(timeout)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            body = response.read()
        except (OSError, http.client.HTTPException) as exc:
            raise self._classify(exc, data) from exc
        finally:
            connection.close()
        if response.status >= 400:
            raise ServerRejected(response.status, _error_message(body, response.reason))
        return Reply(response.status, response.getheader("Content-Type", ""), body)

    def _verified(self, timeout_s: float) -> http.client.HTTPConnection:
        """A connection whose server proved it is ours (nothing else sent on it yet);
        NotOurServer when it could not, ServerDown when nothing listens."""
        connection = http.client.HTTPConnection(self._host, self._port, timeout=timeout_s)
        nonce = new_nonce()
        try:
            connection.request("GET", IDENTITY_PATH, headers={CHALLENGE_HEADER: nonce})
            assert connection.sock is not None  # request() connected it
            ends = connection.sock.getsockname()[:2], connection.sock.getpeername()[:2]
            response = connection.getresponse()
            raw = response.read(_IDENTITY_REPLY_MAX)
        except (OSError, http.client.HTTPException) as exc:
            connection.close()
            raise self._classify(exc) from exc
        if (
            response.status != 200
            or not response.isclosed()  # more than an identity answer: not ours
            or connection.sock is None  # it closed the connection: ours keeps it open
            or not self._proven(raw, nonce, *ends)
        ):
            connection.close()
            path = identity_file(self._environ, self._port)
            raise NotOurServer(
                who_is_not_ours(f"{self._host}:{self._port}", path, read_published(path))
            )
        return connection

    def _proven(
        self, raw: bytes, nonce: str, client: tuple[str, int], server: tuple[str, int]
    ) -> bool:
        try:
            answer = json.loads(raw)
        except ValueError:
            return False
        published = read_published(identity_file(self._environ, self._port))
        wanted = expected_answer(published, self._token, nonce, client, server)
        if wanted is None or not isinstance(answer, dict):
            return False
        given = answer.get(wanted[0])
        return isinstance(given, str) and hmac.compare_digest(given, wanted[1])

    def _classify(self, reason: object, data: bytes | None = None) -> CommandFailed:
        if (
            data is not None
            and isinstance(reason, OSError)
            and reason.errno in _CUT_OFF_ERRNOS
            and len(data) > _CUT_OFF_MIN_BYTES
        ):
            # The server took the connection, then closed it under a large body: it refuses a
            # body over its limit with 413 before reading it, and the send fails before the
            # answer can be read. Say so instead of "not running".
            return ServerRejected(
                413,
                f"the server closed the connection while a {len(data):,}-byte request was being "
                "sent: it is most likely over the server's body limit "
                "(LIVE_MEMORY_MAX_BODY_BYTES; send less, or raise the limit)",
            )
        if isinstance(reason, TimeoutError):
            return ServerUnreachable(
                f"live-memory server at {self.base_url} did not answer within the timeout",
                ExitCode.FAILED,
            )
        if isinstance(reason, socket.gaierror):
            return ServerDown(self.base_url)
        if isinstance(reason, OSError) and reason.errno in _DOWN_ERRNOS:
            return ServerDown(self.base_url)
        if isinstance(reason, ConnectionRefusedError):
            return ServerDown(self.base_url)
        return ServerUnreachable(
            f"could not talk to the live-memory server at {self.base_url}: {reason}",
            ExitCode.FAILED,
        )


def _error_message(raw: bytes, reason: str) -> str:
    """The `error` field of a JSON error body, else the start of the body, else the reason."""
    try:
        parsed = json.loads(raw)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("error"), str):
        return str(parsed["error"])
    text = raw.decode("utf-8", errors="replace").strip()
    return text[:_ERROR_BODY_MAX] if text else reason
