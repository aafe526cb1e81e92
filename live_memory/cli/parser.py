"""The argument parser of `live-memory`: subcommands and flags, nothing else."""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from typing import Any, NoReturn, Protocol

from live_memory import __version__
from live_memory.cli.agent_table import AGENTS
from live_memory.cli.client import default_server_url
from live_memory.cli.outcome import CommandFailed, ExitCode

__all__ = [
    "UsageError",
    "build_parser",
    "directory",
    "existing_path",
    "port_number",
    "positive_int",
]

_EPILOG = """\
exit codes: 0 ok, 1 the server answered an error (or a step failed), 2 usage or
configuration error, 3 the server is not running at the URL.
environment: LIVE_MEMORY_HOST / LIVE_MEMORY_PORT pick the default --server,
LIVE_MEMORY_TOKEN is sent as a bearer token; `serve` reads every LIVE_MEMORY_* variable.
"""


class UsageError(CommandFailed):
    """Bad arguments: raised instead of argparse's print-and-exit, so that `main` can answer
    in JSON under --json; `parser` is the (sub)parser whose usage applies."""

    def __init__(self, message: str, parser: argparse.ArgumentParser) -> None:
        super().__init__(message, ExitCode.USAGE)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see `{self.prog} --help`)", self)


def positive_int(text: str) -> int:
    try:
        value = int(text, 10)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def port_number(text: str) -> int:
    value = positive_int(text)
    if value > 65535:
        raise argparse.ArgumentTypeError(f"a port is 1-65535, got {text!r}")
    return value


def directory(text: str) -> str:
    """An existing directory, made absolute (the server refuses relative paths)."""
    path = os.path.abspath(os.path.expanduser(text))
    if not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"not an existing directory: {text!r}")
    return path


def existing_path(text: str) -> str:
    """An existing file or directory, made absolute."""
    path = os.path.abspath(os.path.expanduser(text))
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"no such file or directory: {text!r}")
    return path


def _client_options(environ: Mapping[str, str], suppress: bool) -> _Parser:
    """--server/--json, accepted before and after the subcommand.

    The subcommand copies default to SUPPRESS so they never overwrite a value given before
    the subcommand (an argparse pitfall).
    """
    parent = _Parser(add_help=False)
    default_url = default_server_url(environ)
    parent.add_argument(
        "--server",
        metavar="URL",
        default=argparse.SUPPRESS if suppress else default_url,
        help=f"server to talk to (default {default_url})",
    )
    parent.add_argument(
        "--json",
        action="store_true",
        default=argparse.SUPPRESS if suppress else False,
        help="machine-readable JSON output",
    )
    return parent


def build_parser(environ: Mapping[str, str]) -> argparse.ArgumentParser:
    common = _client_options(environ, suppress=True)
    parser = _Parser(
        prog="live-memory",
        description="Live Memory: a persistent codebase Q&A server for coding agents.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        parents=[_client_options(environ, suppress=False)],
    )
    parser.add_argument("--version", action="version", version=f"live-memory {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = sub.add_parser("serve", help="run the server (foreground; supervise it)")
    serve.add_argument("--host", help="bind address (default LIVE_MEMORY_HOST or 127.0.0.1)")
    serve.add_argument("--port", type=port_number, help="port (default LIVE_MEMORY_PORT or 7711)")
    serve.add_argument("--data-dir", metavar="DIR", help="snapshots, config.json, locks")
    serve.add_argument(
        "--fd",
        type=int,
        metavar="N",
        help="serve on this inherited, already bound socket (its port wins over --port)",
    )
    serve.add_argument(
        "--config", metavar="FILE", help="config file instead of <data dir>/config.json"
    )
    serve.add_argument(
        "--as-service",
        action="store_true",
        help="use the supervised service's environment (~/.config/live-memory/env) instead of "
        "this shell's: same data dir, config and provider as the service",
    )

    sub.add_parser("status", parents=[common], help="is the server up; provider, model, uptime")

    stats = sub.add_parser("stats", parents=[common], help="a workspace's window, cost and cache")
    _cwd_option(stats)
    stats.add_argument("--by-day", action="store_true", help="usage per day")

    ask = sub.add_parser("ask", parents=[common], help="ask a question about a workspace")
    ask.add_argument("question", metavar="QUESTION")
    _cwd_option(ask)
    ask.add_argument("--max-answer-tokens", metavar="N", type=positive_int)

    sub.add_parser("actors", parents=[common], help="the server's actors and what they are doing")

    dashboard = sub.add_parser(
        "dashboard", parents=[common], help="the dashboard's URL (a one-time login link)"
    )
    dashboard.add_argument("--open", action="store_true", help="open it in a browser")

    export = sub.add_parser(
        "export", parents=[common], help="write a workspace's memory as markdown files"
    )
    _cwd_option(export)
    export.add_argument(
        "--out", metavar="DIR", help="where to write (default ./live-memory-knowledge/<repo>)"
    )
    import_ = sub.add_parser(
        "import", parents=[common], help="seed a workspace's memory from exported markdown"
    )
    import_.add_argument("source", metavar="FILE|DIR", type=existing_path)
    _cwd_option(import_)

    reset = sub.add_parser("reset", parents=[common], help="wipe a workspace's memory, re-preload")
    _cwd_option(reset)
    empty = sub.add_parser("empty", parents=[common], help="wipe a workspace's memory only")
    scope = empty.add_mutually_exclusive_group()
    _cwd_option(scope)
    scope.add_argument(
        "--all",
        dest="all_workspaces",
        action="store_true",
        help="wipe every workspace the server knows, loaded or stored",
    )

    config = sub.add_parser("config", help="show or change settings (config.json, hot reload)")
    config_sub = config.add_subparsers(dest="config_command", metavar="ACTION", required=True)
    get = config_sub.add_parser("get", parents=[common], help="effective settings, secrets masked")
    get.add_argument("key", metavar="KEY", nargs="?")
    set_ = config_sub.add_parser("set", parents=[common], help="write KEY=VALUE and reload")
    set_.add_argument("assignments", metavar="KEY=VALUE", nargs="+")
    for action in (get, set_):
        action.add_argument("--data-dir", metavar="DIR", help="the data dir holding config.json")
        action.add_argument("--config", metavar="FILE", help="edit this file instead")

    agents = sorted(AGENTS)
    connect = sub.add_parser(
        "connect", parents=[common], help="connect a coding agent (MCP, hooks, instructions)"
    )
    connect.add_argument(
        "agent", metavar="AGENT", nargs="?", choices=agents, help=", ".join(agents)
    )
    connect.add_argument("--list", action="store_true", help="what is connected, where, hooks")
    connect.add_argument(
        "--http-hooks",
        action="store_true",
        help="claude-code: Claude Code posts PostToolUse itself (no process per tool call)",
    )
    disconnect = sub.add_parser("disconnect", parents=[common], help="undo `connect AGENT`")
    disconnect.add_argument("agent", metavar="AGENT", choices=agents, help=", ".join(agents))
    for action in (connect, disconnect):
        action.add_argument(
            "--project",
            metavar="DIR",
            nargs="?",
            const=".",
            type=directory,
            help="this repository's files instead of the user's (default DIR: .)",
        )

    install = sub.add_parser(
        "install-service", help="run the server as a systemd user unit (launchd on macOS)"
    )
    install.add_argument(
        "--dry-run", action="store_true", help="print what would be written and run"
    )
    return parser


class _Options(Protocol):
    """A parser or an argument group of one: what `add_argument` is called on."""

    def add_argument(self, *args: Any, **kwargs: Any) -> argparse.Action: ...


def _cwd_option(parser: _Options) -> None:
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        type=directory,
        default=None,
        help="workspace directory (default: the current directory)",
    )
