"""`live-memory export` and `live-memory import`: a workspace's ledger as markdown, both ways.

`export` asks the server for the ledger (GET /api/export?cwd=) and writes one markdown file per
category with `live_memory.knowledge.export_ledger`, by default into
`./live-memory-knowledge/<repo>`; `import` reads such files back with `import_ledger` and hands
the facts to the server (POST /api/import), which merges them without duplicates. On the wire a
fact is `{"text", "category", "stale", "sources": [[path, sha256], ...]}`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Final

from live_memory.cli.commands import Invocation
from live_memory.cli.outcome import CommandFailed, ExitCode
from live_memory.cli.render import render_json
from live_memory.knowledge import KnowledgeError, export_ledger, import_ledger
from live_memory.memory import LedgerFact

__all__ = [
    "DEFAULT_EXPORT_DIR",
    "export_knowledge",
    "fact_from_json",
    "fact_to_json",
    "import_knowledge",
]

DEFAULT_EXPORT_DIR: Final = "live-memory-knowledge"


def export_knowledge(inv: Invocation, cwd: str, out_dir: str | None, here: Path) -> int:
    """Write the workspace's ledger as markdown into `out_dir` (default under `here`).

    Raises ServerDown/ServerRejected (a 404 names an unknown workspace) and CommandFailed for a
    malformed answer or a file that cannot be written.
    """
    payload = inv.client.get("/api/export", {"cwd": cwd}).json()
    if not isinstance(payload, Mapping):
        raise CommandFailed("GET /api/export answered something that is not a JSON object")
    repo = _repo_name(payload.get("repo"))
    items = payload.get("facts")
    if not isinstance(items, list):
        raise CommandFailed("GET /api/export answered without a facts list")
    facts = [fact_from_json(item, index) for index, item in enumerate(items)]
    target = Path(out_dir) if out_dir else here / DEFAULT_EXPORT_DIR / repo
    workspace = str(payload.get("workspace") or cwd)
    if not facts:  # five "Nothing recorded yet" files in the user's repository help no one
        if inv.as_json:
            inv.emit(render_json({"workspace": workspace, "repo": repo, "facts": 0, "files": []}))
        else:
            inv.emit(f"the memory of {workspace} holds no facts yet: nothing exported")
        return ExitCode.OK
    try:
        files = export_ledger(facts, target.absolute(), repo_name=repo)
    except KnowledgeError as exc:
        raise CommandFailed(str(exc)) from exc
    stale = sum(fact.stale for fact in facts)
    if inv.as_json:
        report = {
            "workspace": workspace,
            "repo": repo,
            "out_dir": str(target.absolute()),
            "facts": len(facts),
            "stale": stale,
            "files": [str(path) for path in files],
        }
        inv.emit(render_json(report))
        return ExitCode.OK
    marked = f" ({stale} possibly out of date)" if stale else ""
    inv.emit(f"exported {_facts(len(facts))}{marked} of {workspace} to {target.absolute()}")
    inv.emit("\n".join(f"  {path.name}" for path in files))
    return ExitCode.OK


def import_knowledge(inv: Invocation, source: str, cwd: str) -> int:
    """Seed the workspace's ledger from a markdown file or a directory of them.

    Raises CommandFailed when nothing can be read, ServerDown/ServerRejected from the server.
    """
    path = Path(source)
    if path.is_dir() and not any(path.glob("*.md")):
        raise CommandFailed(f"no markdown (*.md) files in {source}")
    try:
        facts = import_ledger(path)
    except KnowledgeError as exc:
        raise CommandFailed(str(exc)) from exc
    if not facts:
        raise CommandFailed(
            f"no facts found in {source}: a fact is a line starting with '- ', optionally "
            "followed by indented '  source: PATH' lines (the form `live-memory export` writes)"
        )
    body = {"cwd": cwd, "facts": [fact_to_json(fact) for fact in facts]}
    reply = inv.client.post("/api/import", body).json()
    if not isinstance(reply, Mapping):
        raise CommandFailed("POST /api/import answered something that is not a JSON object")
    if inv.as_json:
        inv.emit(render_json({"source": source, "read": len(facts), **reply}))
        return ExitCode.OK
    added = reply.get("added", "?")
    line = f"imported {added} of {_facts(len(facts))} read from {source} into {cwd}"
    full, dropped = reply.get("ledger_full"), reply.get("dropped")
    if isinstance(added, int) and added < len(facts) and not full and not dropped:
        line += f" ({len(facts) - added} already known)"  # the ledger merges them away
    inv.emit(line)
    for note in (full, dropped):
        if isinstance(note, str):
            inv.emit(note)
    total = reply.get("ledger_facts")
    if isinstance(total, int):
        inv.emit(f"its ledger now holds {_facts(total)}")
    return ExitCode.OK


def fact_to_json(fact: LedgerFact) -> dict[str, object]:
    return {
        "text": fact.text,
        "category": fact.category,
        "stale": fact.stale,
        "sources": [[path, sha] for path, sha in fact.sources],
    }


def fact_from_json(item: object, index: int) -> LedgerFact:
    """The LedgerFact of one wire fact; raises CommandFailed naming the fact when malformed."""
    where = f"GET /api/export answered a malformed facts[{index}]"
    if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
        raise CommandFailed(f"{where}: it needs a text")
    category = item.get("category", "architecture")
    stale = item.get("stale", False)
    if not isinstance(category, str) or not isinstance(stale, bool):
        raise CommandFailed(f"{where}: category must be a string and stale a boolean")
    pairs = item.get("sources", [])
    if not isinstance(pairs, list) or not all(
        isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)
        for pair in pairs
    ):
        raise CommandFailed(f"{where}: sources must be a list of [path, sha256] pairs")
    sources = tuple((str(pair[0]), str(pair[1])) for pair in pairs)
    return LedgerFact(str(item["text"]), sources, category, stale)


def _repo_name(value: object) -> str:
    """The repo name the server gave, refused unless it is one safe path component."""
    if not isinstance(value, str) or value in ("", ".", "..") or any(c in value for c in "/\\\0"):
        raise CommandFailed(f"GET /api/export answered an unusable repo name {value!r}")
    return value


def _facts(count: int) -> str:
    return "1 fact" if count == 1 else f"{count} facts"
