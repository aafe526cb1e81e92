"""`live-memory`: parse, dispatch, and turn failures into a message and an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from live_memory.cli import commands
from live_memory.cli.client import (
    ServerClient,
    ServerRejected,
    checked_server_url,
    default_server_url,
)
from live_memory.cli.config_command import config_get, config_set
from live_memory.cli.connect_command import connect, disconnect, list_connections
from live_memory.cli.dashboard_command import dashboard
from live_memory.cli.knowledge_command import export_knowledge, import_knowledge
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.parser import UsageError, build_parser
from live_memory.cli.render import render_json
from live_memory.cli.serve import serve_command
from live_memory.cli.service import install_service
from live_memory.config import constants as C

__all__ = ["main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: the real environment and standard streams."""
    return run(sys.argv[1:] if argv is None else argv, os.environ, sys.stdout, sys.stderr)


def run(argv: Sequence[str], environ: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    """Run one command; returns its exit code.

    With `--json` anywhere on the line every outcome is JSON on stdout, failures included:
    `{"error": {"message", "exit_code", "status"}}` (`status` is the HTTP status when the
    server answered one, else null), with the same non-zero exit code as without it.
    """
    as_json = "--json" in argv
    parser = build_parser(environ)
    try:
        args = parser.parse_args(list(argv))
        return _dispatch(args, environ, out, err)
    except UsageError as exc:
        if not as_json:
            exc.parser.print_usage(err)
        return _fail(exc, as_json, out, err)
    except CommandFailed as exc:
        return _fail(exc, as_json, out, err)
    except KeyboardInterrupt:
        return _fail(CommandFailed("interrupted", ExitCode.INTERRUPTED), as_json, out, err)


def _fail(exc: CommandFailed, as_json: bool, out: TextIO, err: TextIO) -> int:
    if as_json:
        status = exc.status if isinstance(exc, ServerRejected) else None
        error = {"message": exc.message, "exit_code": int(exc.exit_code), "status": status}
        out.write(render_json({"error": error}) + "\n")
    else:
        err.write(f"live-memory: {exc.message}\n")
    return int(exc.exit_code)


def _dispatch(
    args: argparse.Namespace, environ: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    command: str = args.command
    if command == "serve":
        return serve_command(
            environ,
            host=args.host,
            port=args.port,
            data_dir=args.data_dir,
            config_file=args.config,
            as_service=args.as_service,
            fd=args.fd,
        )
    if command == "install-service":
        return install_service(environ, platform=sys.platform, dry_run=args.dry_run, out=out)

    explicit = args.server != default_server_url(environ)
    server = checked_server_url(args.server, environ, given=explicit)
    client = ServerClient(
        server, environ.get("LIVE_MEMORY_TOKEN") or None, C.CLI_REQUEST_TIMEOUT_S, environ
    )
    if command == "config":
        if args.config_command == "get":
            return config_get(
                environ,
                args.key,
                data_dir=args.data_dir,
                config_file=args.config,
                client=client,
                as_json=args.json,
                out=out,
            )
        return config_set(
            environ,
            args.assignments,
            data_dir=args.data_dir,
            config_file=args.config,
            client=client,
            as_json=args.json,
            out=out,
            err=err,
        )

    if command == "connect" and args.list:
        return list_connections(environ, as_json=args.json, out=out)
    if command == "connect" and args.agent is None:
        raise CommandFailed("connect needs an AGENT (or --list)", ExitCode.USAGE)
    if command in ("connect", "disconnect"):
        project = Path(args.project) if args.project else None
        if command == "disconnect":
            return disconnect(args.agent, environ=environ, project=project, out=out)
        return connect(
            args.agent,
            environ=environ,
            project=project,
            http_hooks=args.http_hooks,
            client=client,
            out=out,
            err=err,
        )

    inv = commands.Invocation(client=client, as_json=args.json, out=out)
    given: str | None = getattr(args, "cwd", None)
    cwd = given or os.path.abspath(os.getcwd())
    if command == "status":
        return commands.status(inv)
    if command == "stats":
        return commands.stats(inv, given, args.by_day)
    if command == "ask":
        shows_progress = not args.json and err.isatty()
        return commands.ask(
            inv, args.question, cwd, args.max_answer_tokens, err if shows_progress else None
        )
    if command == "actors":
        return commands.actors(inv)
    if command == "dashboard":
        return dashboard(inv, open_browser=args.open)
    if command == "export":
        return export_knowledge(inv, cwd, args.out, Path.cwd())
    if command == "import":
        return import_knowledge(inv, args.source, cwd)
    if command == "reset":
        return commands.reset(inv, cwd)
    if command == "empty":
        return commands.clear_all(inv) if args.all_workspaces else commands.clear(inv, cwd)
    raise CommandFailed(f"unknown command {command!r}", ExitCode.USAGE)
