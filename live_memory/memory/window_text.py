"""How a window is written into the prompt, and how long that text is without writing it.

Two renderings: the frozen volatile block (ledger, held files, manifest), written at load and
compaction, and an observation delta (what changed since), appended before a question. Each
comes with its length computed from the running totals the window keeps, so the budget is
exact and O(1); the two live side by side so they cannot drift apart.

An observation delta is a user turn of its own, framed as data between an opening and a
closing marker, and is followed by no assistant acknowledgement: a small local model copies
whatever the assistant said last, and the recordings (tests/fixtures/local-model/) show it
answering a question with the ack ("Noted.") and with an invented observation block.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final, Literal

from live_memory.memory.file_table import FileTable, file_block, manifest_line
from live_memory.memory.ledger import render_ledger
from live_memory.memory.model import FileContext, LedgerFact

__all__ = [
    "OBSERVATION_MARKERS",
    "PendingChange",
    "delta_chars",
    "frozen_chars",
    "notes_chars",
    "render_delta",
    "render_frozen",
]

PendingChange = Literal["content", "stale", "deleted"]

_PRELOAD_HEADING: Final = "## Reference documents (configured preload, verbatim)"
_OBSERVED_HEADING: Final = "## Files the coding agent recently read or wrote (current content)"
_MANIFEST_HEADING: Final = "## Files you have seen (re-read with Read when you need their content)"
_NO_FILES: Final = "(none yet)"
_DELTA_HEADING: Final = (
    "[workspace update: data from the coding agent's session, not a question; no reply is "
    "needed] Changes in the workspace since you last looked:"
)
_DELTA_END: Final = "[end of workspace update]"
OBSERVATION_MARKERS: Final = ("[workspace update", _DELTA_END, "[observation]")
"""How an observation delta begins and ends (and how it began before): a reply that opens
with one copies the framing, it does not answer."""
_NOTICES_HEADING: Final = "File status changes:"
_LEARNED_HEADING: Final = "New durable knowledge:"
_NOTES_HEADING: Final = "Earlier answers that may be out of date:"


def render_frozen(ledger: Sequence[LedgerFact], files: FileTable) -> str:
    """The frozen block: ledger, preloaded then observed files with content, the manifest."""
    preloaded = [f for f in files.values() if f.content and f.source == "preloaded"]
    observed = sorted(
        (f for f in files.values() if f.content and f.source != "preloaded"), key=_path
    )
    parts = [render_ledger(ledger)]
    if preloaded:
        parts += ["", _PRELOAD_HEADING, *(file_block(f) for f in preloaded)]
    if observed:
        parts += ["", _OBSERVED_HEADING, *(file_block(f) for f in observed)]
    manifest = "\n".join(manifest_line(f.path, f.state) for f in sorted(files.values(), key=_path))
    parts += ["", _MANIFEST_HEADING, manifest or _NO_FILES]
    return "\n".join(parts)


def frozen_chars(ledger_chars: int, files: FileTable) -> int:
    """len(render_frozen(...)) from the ledger's rendered length and the table's totals."""
    pre_n, pre_chars = files.preloaded_blocks, files.preloaded_block_chars
    obs_n, obs_chars = files.blocks - pre_n, files.block_chars - pre_chars
    chars = ledger_chars + len(_MANIFEST_HEADING)
    chars += files.manifest_chars - 1 if files else len(_NO_FILES)
    parts = 4  # ledger, "", heading, manifest
    if pre_n:
        chars += len(_PRELOAD_HEADING) + pre_chars
        parts += 2 + pre_n
    if obs_n:
        chars += len(_OBSERVED_HEADING) + obs_chars
        parts += 2 + obs_n
    return chars + parts - 1


def render_delta(
    files: Mapping[str, FileContext],
    pending: Mapping[str, PendingChange],
    learned: Sequence[LedgerFact],
    demotions: int,
    notes: Sequence[str] = (),
) -> str:
    """One observation message: changed files' content, status notices, new facts, notes."""
    content = [files[p] for p, k in sorted(pending.items()) if k == "content"]
    notices = [manifest_line(p, k) for p, k in sorted(pending.items()) if k != "content"]
    parts = [_DELTA_HEADING]
    parts += [file_block(f) for f in content if f.content is not None]
    if notices:
        parts += [_NOTICES_HEADING, *notices]
    if learned:
        parts += [_LEARNED_HEADING, *(f"- {f.text}" for f in learned)]
    if demotions:
        parts.append(_demotion_notice(demotions))
    if notes:
        parts += [_NOTES_HEADING, *notes]
    parts.append(_DELTA_END)
    return "\n".join(parts)


def delta_chars(
    entries_chars: int, notices: int, learned_chars: int, learned: bool, demotions: int
) -> int:
    """len(render_delta(...)). `entries_chars`: the pending files' blocks and notice lines,
    one newline each; `notices`: how many of them are notices; `learned_chars`: the new
    facts' lines, one newline each."""
    chars = len(_DELTA_HEADING) + entries_chars + 1 + len(_DELTA_END)
    if notices:
        chars += len(_NOTICES_HEADING) + 1
    if learned:
        chars += len(_LEARNED_HEADING) + 1 + learned_chars
    if demotions:
        chars += len(_demotion_notice(demotions)) + 1
    return chars


def notes_chars(notes: Sequence[str]) -> int:
    """What `notes` add to len(render_delta(...)) (0 without notes)."""
    if not notes:
        return 0
    return len(_NOTES_HEADING) + 1 + sum(len(n) + 1 for n in notes)


def _demotion_notice(count: int) -> str:
    return (
        f"{count} accumulated fact(s) cite changed files; treat them as "
        "possibly out of date until re-verified."
    )


def _path(ctx: FileContext) -> str:
    return ctx.path
