"""`live-memory`: parse, dispatch, and turn failures into a message and an exit code."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TextIO

from live_memory.cli import commands
from live_memory.cli.client import ServerClient
from live_memory.cli.config_command import config_get, config_set
from live_memory.cli.knowledge_command import export_knowledge, import_knowledge
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.parser import build_parser
from live_memory.cli.serve import serve_command
from live_memory.cli.service import install_service
from live_memory.config import constants as C

__all__ = ["main", "run"]


def main(argv: Sequence[str] | None = None) -> int:
    """Console-script entry point: the real environment and standard streams."""
    return run(sys.argv[1:] if argv is None else argv, os.environ, sys.stdout, sys.stderr)


def run(argv: Sequence[str], environ: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    """Run one command; returns its exit code (argparse itself exits 2 on bad usage)."""
    parser = build_parser(environ)
    args = parser.parse_args(list(argv))
    try:
        return _dispatch(args, environ, out, err)
    except CommandFailed as exc:
        err.write(f"live-memory: {exc.message}\n")
        return int(exc.exit_code)
    except KeyboardInterrupt:
        err.write("live-memory: interrupted\n")
        return 130


def _dispatch(
    args: argparse.Namespace, environ: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    command: str = args.command
    if command == "serve":
        return serve_command(
            environ, host=args.host, port=args.port, data_dir=args.data_dir, config_file=args.config
        )
    if command == "install-service":
        return install_service(environ, platform=sys.platform, dry_run=args.dry_run, out=out)

    client = ServerClient(
        args.server, environ.get("LIVE_MEMORY_TOKEN") or None, C.CLI_REQUEST_TIMEOUT_S
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

    inv = commands.Invocation(client=client, as_json=args.json, out=out)
    cwd: str = getattr(args, "cwd", None) or os.path.abspath(os.getcwd())
    if command == "status":
        return commands.status(inv)
    if command == "stats":
        return commands.stats(inv, cwd, args.by_day)
    if command == "ask":
        return commands.ask(inv, args.question, cwd, args.max_answer_tokens)
    if command == "actors":
        return commands.actors(inv)
    if command == "export":
        return export_knowledge(inv, cwd, args.out, Path.cwd())
    if command == "import":
        return import_knowledge(inv, args.source, cwd)
    if command == "reset":
        return commands.reset(inv, cwd)
    if command == "empty":
        return commands.clear(inv, cwd)
    raise CommandFailed(f"unknown command {command!r}", ExitCode.USAGE)
