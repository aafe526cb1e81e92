"""A workspace's ledger as markdown a person can read and `live-memory import` can read back.

One file per category (`architecture.md`, `convention.md`, `decision.md`, `gotcha.md`,
`task.md`), each looking like:

    # Gotchas — myrepo

    <!-- live-memory knowledge: category=gotcha repo=myrepo ... -->

    - The session cookie is signed with the key in src/auth/keys.py
      - source: `src/auth/keys.py` sha256:3f2a…
    - ⚠ possibly out of date: Tests need REDIS_URL set
      - source: `tests/conftest.py` sha256:9b1c…

A fact is a bullet at column 0; a fact spanning lines continues on lines indented by two
spaces; each `source:` sub-bullet is one (workspace-relative path, sha256 at distillation time)
pair of its provenance (by hand, `  source: app/router.py` will do). The category comes from
the comment (or, for a hand-written file, from the file name). Every category gets a file,
empty ones included, so a copy kept under LIVE_MEMORY_INSIGHTS_ROOT never shows facts the
ledger no longer has.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from live_memory.atomic_file import write_atomically
from live_memory.config.constants import KNOWLEDGE_CATEGORIES
from live_memory.knowledge.error import KnowledgeError
from live_memory.memory import LedgerFact
from live_memory.regular_file import read_regular

__all__ = ["STALE_MARK", "export_ledger", "import_ledger", "insights_path", "render_category"]

logger = logging.getLogger(__name__)

STALE_MARK = "⚠ possibly out of date: "
_TITLES = {
    "architecture": "Architecture",
    "convention": "Conventions",
    "decision": "Decisions",
    "gotcha": "Gotchas",
    "task": "Tasks",
}
_EMPTY = "_Nothing recorded yet._"
_DEFAULT_CATEGORY = KNOWLEDGE_CATEGORIES[0]
_SAFE_CATEGORY = re.compile(r"[a-z0-9][a-z0-9_-]*")
_MARKER = re.compile(r"<!-- live-memory knowledge: category=([a-z0-9][a-z0-9_-]*)\b")
_FACT = re.compile(r"[-*] (.*)")
# `  - source: `path` sha256:…` as exported; by hand also `  source: path` (no bullet, quotes)
_SOURCE = re.compile(r"[ \t]+(?:[-*] )?source:[ \t]*(?:`(.+)`|(\S.*?))(?:[ \t]+sha256:(\S*))?\s*")


def insights_path(root_dir: Path, repo_name: str, category: str) -> Path:
    """`<root_dir>/<repo_name>/<category>.md`, the LIVE_MEMORY_INSIGHTS_ROOT copy of a category.

    Raises ValueError when `repo_name` or `category` is not a single safe path component.
    """
    if repo_name in ("", ".", "..") or any(c in repo_name for c in "/\\\0"):
        raise ValueError(f"repo name must be a single path component, got {repo_name!r}")
    if not _SAFE_CATEGORY.fullmatch(category):
        raise ValueError(f"category must be a lower-case word, got {category!r}")
    return root_dir / repo_name / f"{category}.md"


def export_ledger(facts: Iterable[LedgerFact], out_dir: Path, *, repo_name: str) -> list[Path]:
    """Write one markdown file per category into `out_dir`, atomically; returns their paths.

    Facts keep their order within a category. A fact whose category is not a plain lower-case
    word is filed under architecture. Raises KnowledgeError when a file cannot be written.
    """
    grouped: dict[str, list[LedgerFact]] = {category: [] for category in KNOWLEDGE_CATEGORIES}
    for fact in facts:
        category = fact.category if _SAFE_CATEGORY.fullmatch(fact.category) else None
        if category is None:
            logger.warning("fact with category %r filed under architecture", fact.category)
        grouped.setdefault(category or _DEFAULT_CATEGORY, []).append(fact)
    written = []
    for category, members in grouped.items():
        path = out_dir / f"{category}.md"
        _write_atomically(path, render_category(category, members, repo_name=repo_name))
        written.append(path)
    count = sum(map(len, grouped.values()))
    logger.info("exported %d fact(s) of %s to %s", count, repo_name, out_dir)
    return written


def render_category(category: str, facts: Iterable[LedgerFact], *, repo_name: str) -> str:
    """The markdown of one category file."""
    title = _TITLES.get(category, category.capitalize())
    lines = [
        f"# {title} — {repo_name}",
        "",
        f"<!-- live-memory knowledge: category={category} repo={repo_name}. One fact per "
        '"- " bullet; each "source:" line under a fact is a file it was distilled from, with '
        "the sha256 the file had then. `live-memory import` reads this file back. -->",
        "",
    ]
    body = [line for fact in facts for line in _fact_lines(fact)]
    lines.extend(body or [_EMPTY])
    return "\n".join(lines) + "\n"


def _fact_lines(fact: LedgerFact) -> list[str]:
    text = STALE_MARK + fact.text if fact.stale else fact.text
    first, *rest = text.split("\n")
    lines = [f"- {first}", *(f"  {line}" for line in rest)]
    for path, sha in fact.sources:
        lines.append(f"  - source: `{path}`" + (f" sha256:{sha}" if sha else ""))
    return lines


def import_ledger(path: Path) -> list[LedgerFact]:
    """The facts of a markdown file, or of every `*.md` file in a directory (sorted by name).

    Duplicates are not removed here; merge the result with `merge_facts`. Raises
    KnowledgeError when the path does not exist or a file cannot be read.
    """
    try:
        files = sorted(path.glob("*.md")) if path.is_dir() else [path]
        return [fact for file in files for fact in _parse(read_regular(file).decode("utf-8"), file)]
    except (OSError, UnicodeDecodeError) as exc:
        raise KnowledgeError(f"knowledge {path} cannot be read: {exc}") from exc


@dataclass(slots=True)
class _Draft:
    lines: list[str]
    sources: list[tuple[str, str]] = field(default_factory=list)

    def fact(self, category: str) -> LedgerFact:
        text = "\n".join(self.lines)
        stale = text.startswith(STALE_MARK)
        text = text.removeprefix(STALE_MARK) if stale else text
        return LedgerFact(text, tuple(self.sources), category, stale)


def _parse(markdown: str, file: Path) -> list[LedgerFact]:
    marker = _MARKER.search(markdown)
    if marker is not None:
        category = marker.group(1)
    else:
        stem = file.stem.lower()
        category = stem if stem in KNOWLEDGE_CATEGORIES else _DEFAULT_CATEGORY
    facts: list[LedgerFact] = []
    draft: _Draft | None = None
    for line in markdown.splitlines():
        source = _SOURCE.fullmatch(line)
        bullet = _FACT.fullmatch(line)
        if draft is not None and source is not None:
            draft.sources.append((source.group(1) or source.group(2), source.group(3) or ""))
        elif draft is not None and line.startswith("  ") and not draft.sources:
            draft.lines.append(line[2:])
        elif bullet is not None and bullet.group(1).strip():
            if draft is not None:
                facts.append(draft.fact(category))
            draft = _Draft([bullet.group(1)])
        elif draft is not None and not line.startswith("  "):
            facts.append(draft.fact(category))
            draft = None
    if draft is not None:
        facts.append(draft.fact(category))
    logger.debug("read %d fact(s) from %s", len(facts), file)
    return facts


def _write_atomically(path: Path, text: str) -> None:
    try:
        write_atomically(path, text.encode("utf-8"))
    except OSError as exc:
        raise KnowledgeError(f"knowledge file {path} cannot be written: {exc}") from exc
