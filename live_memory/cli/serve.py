"""`live-memory serve`: one supervised server process per port.

Order matters: settings come first (cheap, refuse early), then the loopback/token check, then
the singleton lock (a second server exits at once, before touching the port or any state), then
the listening socket (a port held by another program fails clearly), and only then the app,
whose lifespan starts the actor system.
"""

from __future__ import annotations

import faulthandler
import logging
import os
import signal
import socket
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import FrameType

import uvicorn
from starlette.types import ASGIApp

from live_memory.cli.lock import ServeLock
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.config import (
    Settings,
    check_exposure,
    check_startable,
    configure_logging,
    is_loopback,
    load_settings,
    service_environment,
    session_mismatch,
)
from live_memory.config import constants as C
from live_memory.errors import ConfigError
from live_memory.server_identity import ServerIdentity

__all__ = [
    "bind_socket",
    "is_loopback",
    "require_token_off_loopback",
    "run_server",
    "startup_line",
    "uvicorn_config",
]

logger = logging.getLogger(__name__)


def require_token_off_loopback(settings: Settings) -> None:
    """Raise CommandFailed (usage) when binding beyond loopback without a token."""
    try:
        check_exposure(settings)
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc


def bind_socket(host: str, port: int) -> socket.socket:
    """A bound (not yet listening) TCP socket; CommandFailed when the port is taken."""
    try:
        infos = socket.getaddrinfo(
            host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except socket.gaierror as exc:
        raise CommandFailed(f"cannot resolve host {host!r}: {exc}", ExitCode.USAGE) from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    # SO_REUSEADDR lets a restart reuse a port in TIME_WAIT; it does not let two listeners share.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise CommandFailed(
            f"cannot listen on {host}:{port}: {exc.strerror or exc} "
            "(is another program using the port? pick one with --port)",
            ExitCode.FAILED,
        ) from exc
    sock.set_inheritable(True)
    return sock


class _GracefulStop:
    """Our SIGTERM/SIGINT handler outside uvicorn's own: ask the server to drain, never kill.

    It is installed before the app is built and stays as the handler uvicorn restores and
    re-raises into after shutdown; with the default handler that re-raise would end the process
    with 128+signum, while a graceful stop is a success (exit 0).
    """

    def __init__(self) -> None:
        self.server: uvicorn.Server | None = None
        self.requested = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        self.requested = True
        if self.server is not None:
            self.server.should_exit = True


def uvicorn_config(app: ASGIApp, settings: Settings) -> uvicorn.Config:
    """How uvicorn serves `app`: our HTTP protocol (limits), and nothing per request that is
    not ours (hooks open a connection per file event; bench/peer_compare.py measures it)."""
    # After the app is built: the gateway package is imported by then (see build_app).
    from live_memory.gateway import (  # noqa: PLC0415
        direct_notify_of,
        held_requests_of,
        limited_http_protocol,
    )

    return uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        lifespan="on",
        timeout_graceful_shutdown=int(C.SHUTDOWN_GRACE_S),
        timeout_keep_alive=int(C.KEEP_ALIVE_TIMEOUT_S),
        # Head size, request deadline and the connection cap (shedding idle connections,
        # event streams and slow bodies, not answering 503 to all): see gateway/http_limits.
        # ... and `POST /notify` answered by the protocol itself (gateway/notify_direct).
        http=limited_http_protocol(
            head_timeout_s=settings.request_timeout_s,
            max_connections=settings.max_connections,
            direct=direct_notify_of(app),
            held=held_requests_of(app),
        ),
        h11_max_incomplete_event_size=C.MAX_HEADER_BYTES,
        server_header=False,
        # uvicorn logs every request when any handler is on the root logger (ours is): a
        # JSON line on stderr per hook request. Only at DEBUG now.
        access_log=settings.log_level.strip().upper() == "DEBUG",
        # A loopback server behind no proxy: X-Forwarded-* is never trusted, so uvicorn's
        # per-request proxy-header middleware is left out.
        proxy_headers=False,
    )


def run_server(
    settings: Settings,
    app_factory: Callable[[Settings], ASGIApp],
    *,
    sock: socket.socket | None = None,
    environ: Mapping[str, str] | None = None,
) -> int:
    """Serve the app built by `app_factory` until SIGTERM/SIGINT; returns the exit code.

    `kill -USR1 <pid>` dumps every thread's stack to stderr (the supervisor's log). Raises
    ServeLockHeld when another server holds the port's lock, CommandFailed when the host is
    refused, the data dir is unusable, the port cannot be bound, or the app fails to start.
    The app's identity is published for the port (in `environ`'s identity directory) while it
    serves, so clients can tell it from a squatter (live_memory/server_identity.py).
    """
    require_token_off_loopback(settings)
    # Snapshots, logs, usage and transcript digests describe private code: owner-only files.
    os.umask(C.DATA_UMASK)
    try:
        lock = ServeLock.acquire(Path(settings.data_dir), settings.port)
    except OSError as exc:
        raise CommandFailed(
            f"cannot use the data dir {settings.data_dir}: {exc.strerror or exc}", ExitCode.FAILED
        ) from exc
    with lock:
        if sock is None:
            sock = bind_socket(settings.host, settings.port)
        port = sock.getsockname()[1]
        stop = _GracefulStop()
        published = None
        previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        faulthandler.register(signal.SIGUSR1, file=sys.stderr, all_threads=True)
        try:
            app = app_factory(settings)
            published = _publish_identity(app, environ or {}, port)
            config = uvicorn_config(app, settings)
            server = uvicorn.Server(config)
            stop.server = server
            server.should_exit = stop.requested
            print(startup_line(settings, port), file=sys.stderr, flush=True)
            logger.info(
                "live-memory serving on %s:%s (pid %s, data dir %s, lock %s)",
                settings.host,
                port,
                os.getpid(),
                settings.data_dir,
                lock.path,
            )
            try:
                server.run(sockets=[sock])
            except SystemExit as exc:  # uvicorn exits this way when the app's startup fails
                raise CommandFailed(
                    f"live-memory server failed to start (uvicorn exit {exc.code}); see the log",
                    ExitCode.FAILED,
                ) from exc
        finally:
            if published is not None:
                published[0].withdraw(published[1])
            faulthandler.unregister(signal.SIGUSR1)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            sock.close()
    return ExitCode.OK


def startup_line(settings: Settings, port: int) -> str:
    """The one line `serve` prints for a person (the log lines are JSON, for machines): where
    to reach the server and its dashboard, and which model answers, or what to set."""
    host = settings.host.strip("[]")
    if host in ("0.0.0.0", "::", ""):
        host = "127.0.0.1"  # every interface: this machine reaches it on loopback
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}"
    if settings.provider is None:
        model = settings.provider_problem or "No model provider configured: set ANTHROPIC_API_KEY"
    else:
        model = f"provider {settings.provider}, model {settings.model}"
        if settings.base_url:
            model += f" at {settings.base_url}"
    dashboard = f"{url}/ui" + (" (live-memory dashboard logs you in)" if settings.token else "")
    return f"live-memory serving at {url} (MCP {url}/mcp); dashboard {dashboard}; {model}"


def _service_environment(caller: Mapping[str, str]) -> Mapping[str, str]:
    try:
        environ = service_environment(caller)
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc
    problem = session_mismatch(caller, environ)
    if problem is not None:
        raise CommandFailed(f"refusing to start as the service: {problem}", ExitCode.USAGE)
    return environ


def serve_command(
    environ: Mapping[str, str],
    *,
    host: str | None,
    port: int | None,
    data_dir: str | None,
    config_file: str | None,
    as_service: bool = False,
    fd: int | None = None,
) -> int:
    """Build settings from the environment and flags, set up logging, and run the server.

    `as_service`: take the supervised service's environment (its env file, not the caller's
    variables) so that this server is the service's twin: same data dir, config file and
    provider. Refused when the caller (a Claude Code session) expects another address or token.
    `fd`: an inherited socket, already bound (a supervisor or a test opened the port, so no
    other program can take it between choosing and listening); its port replaces `port`.
    """
    if as_service:
        environ = _service_environment(environ)
    sock = _inherited_socket(fd) if fd is not None else None
    if sock is not None:
        port = sock.getsockname()[1]
    overrides: dict[str, object] = {}
    if host is not None:
        overrides["host"] = host
    if port is not None:
        overrides["port"] = port
    if data_dir is not None:
        overrides["data_dir"] = data_dir
    try:
        settings = load_settings(
            environ,
            config_file=Path(config_file) if config_file else None,
            overrides=overrides,
        )
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc
    try:
        check_startable(settings)  # what `config set` checked: the machine may have changed
        configure_logging(settings.log_level, settings.log_file)
    except ConfigError as exc:
        raise CommandFailed(str(exc), ExitCode.USAGE) from exc

    def build_app(settings: Settings) -> ASGIApp:
        # Imported only now, after the lock and the port: the gateway pulls in the actor
        # system, the MCP SDK and the providers (seconds), and a second `serve` must fail at
        # once; the client commands import this module too and must not pay for it either.
        from live_memory.gateway import create_app  # noqa: PLC0415

        return create_app(settings, environ=environ)  # POST /reload re-reads this environment

    return run_server(settings, build_app, sock=sock, environ=environ)


def _publish_identity(
    app: ASGIApp, environ: Mapping[str, str], port: int
) -> tuple[ServerIdentity, Path] | None:
    from live_memory.gateway import server_identity_of  # noqa: PLC0415 (see build_app)

    identity = server_identity_of(app)
    path = identity.publish(environ, port) if identity is not None else None
    return (identity, path) if identity is not None and path is not None else None


def _inherited_socket(fd: int) -> socket.socket:
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise CommandFailed(f"--fd {fd} is not an open socket: {exc}", ExitCode.USAGE) from exc
    if sock.type != socket.SOCK_STREAM or sock.family not in (socket.AF_INET, socket.AF_INET6):
        raise CommandFailed(f"--fd {fd} is not a TCP socket", ExitCode.USAGE)
    return sock
