"""Claude Code transcripts (JSONL) boiled down to what a summariser should learn from.

A transcript line is one JSON object; the ones that matter are `type: "user"` and
`type: "assistant"` entries whose `message.content` is a string or a list of blocks. The digest
keeps, in order:

    user: <what the user asked>
    tool: <tool name> [<short hint: command, pattern, question>] [<paths it touched>]
    assistant: <what the agent concluded (its text blocks)>

and drops everything else: tool results (file dumps, command output), thinking, attachments,
meta and sidechain entries, queue bookkeeping. Every entry passes through `redact_secrets`, is
cut at TRANSCRIPT_ENTRY_MAX_CHARS, and the whole digest is bounded to `max_chars` by keeping
the latest entries.
"""

from __future__ import annotations

import errno
import logging
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from live_memory.config.constants import (
    TRANSCRIPT_ENTRY_MAX_CHARS,
    TRANSCRIPT_MAX_BYTES,
    TRANSCRIPT_TOOL_HINT_MAX_CHARS,
)
from live_memory.hygiene import redact_secrets
from live_memory.knowledge.error import TranscriptError
from live_memory.regular_file import open_regular

__all__ = ["TranscriptDigest", "digest_transcript"]

logger = logging.getLogger(__name__)

_PATH_KEYS = ("file_path", "notebook_path", "path")
_HINT_KEYS = ("description", "command", "pattern", "query", "question", "url")
_CUT = " …[cut]"
_SYSTEM_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>\s*(.*?)\s*</command-args>", re.DOTALL)
_NOISE_PREFIXES = ("<local-command-", "[Request interrupted", "Caveat: The messages below")
_ABSOLUTE_PATH = re.compile(r"(?<![\w.:/-])/[^\s`'\"()<>\[\]{},;|*?]+")


_READ_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class TranscriptDigest:
    """What one session taught: the bounded text and the files it touched."""

    text: str
    paths: tuple[str, ...]
    """Absolute paths touched by tools or named under the session's cwd, first seen first;
    only those of the entries kept in `text`."""
    session_id: str
    entries_kept: int
    malformed_lines: int = 0
    """Lines that were not a JSON object (skipped)."""
    secrets_redacted: int = 0


@dataclass(slots=True)
class _Entry:
    text: str
    paths: list[str] = field(default_factory=list)
    redacted: int = 0


def digest_transcript(path: Path, *, max_chars: int, root: Path | None = None) -> TranscriptDigest:
    """Read the transcript at `path` and keep what matters, at most `max_chars` characters.

    With `root` (the workspace root), paths under it are shown workspace-relative in the text,
    so facts distilled from it name files the way the ledger attributes them; `paths` stays
    absolute. Raises TranscriptError when the file cannot be read, ValueError for a
    non-positive `max_chars`.
    """
    if max_chars <= 0:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    entries: list[_Entry] = []
    session_id = ""
    malformed = 0
    redacted = 0
    for record in _records(path):
        if record is None:
            malformed += 1
            continue
        if not session_id and isinstance(found := record.get("sessionId"), str):
            session_id = found
        for entry in _entries(record, root):
            # Redacted before any cut, so a cut never leaves half a key unrecognisable.
            entry.text = _cut(entry.text, TRANSCRIPT_ENTRY_MAX_CHARS)
            redacted += entry.redacted
            entries.append(entry)
    kept = _latest(entries, max_chars)
    paths = list(dict.fromkeys(p for entry in kept for p in entry.paths))
    if malformed:
        logger.info("transcript %s: skipped %d malformed line(s)", path, malformed)
    return TranscriptDigest(
        text="\n".join(entry.text for entry in kept),
        paths=tuple(paths),
        session_id=session_id or path.stem,
        entries_kept=len(kept),
        malformed_lines=malformed,
        secrets_redacted=redacted,
    )


def read_transcript_bytes(path: Path, max_bytes: int = TRANSCRIPT_MAX_BYTES) -> bytes:
    """The transcript's bytes — at most its last `max_bytes`, from a line start.

    Only a regular file is read: a FIFO, device (`/dev/zero`), socket or symlink is refused
    before any byte is read, so a caller cannot block or exhaust the server through it.
    Raises TranscriptError.
    """
    try:
        fd = open_regular(path, follow_symlinks=False)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise TranscriptError(f"transcript {path} is not a regular file") from exc
        raise TranscriptError(f"transcript {path} cannot be read: {exc.strerror or exc}") from exc
    try:
        info = os.fstat(fd)
        start = max(info.st_size - max_bytes, 0)
        os.lseek(fd, start, os.SEEK_SET)
        chunks, left = [], min(info.st_size, max_bytes)
        while left > 0 and (chunk := os.read(fd, min(left, _READ_CHUNK))):
            chunks.append(chunk)
            left -= len(chunk)
    except OSError as exc:
        raise TranscriptError(f"transcript {path} cannot be read: {exc.strerror or exc}") from exc
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if start:  # began mid-file: drop the partial first line
        data = data[data.find(b"\n") + 1 :]
    return data


def _records(path: Path) -> Iterator[dict[str, object] | None]:
    """Each non-blank line as a JSON object, or None for a line that is not one."""
    for line in read_transcript_bytes(path).splitlines():
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            yield None
            continue
        yield record if isinstance(record, dict) else None


def _entries(record: Mapping[str, object], root: Path | None) -> list[_Entry]:
    kind = record.get("type")
    if kind not in ("user", "assistant") or record.get("isSidechain") is True:
        return []
    if record.get("isMeta") is True or record.get("isCompactSummary") is True:
        return []
    message = record.get("message")
    if not isinstance(message, Mapping):
        return []
    raw_cwd = record.get("cwd")
    cwd = raw_cwd if isinstance(raw_cwd, str) else None
    content = message.get("content")
    blocks: list[object] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else _as_list(content)
    )
    entries: list[_Entry] = []
    for block in blocks:
        if not isinstance(block, Mapping):
            continue
        block_type = block.get("type")
        # tool_result, thinking, image and document blocks never reach the digest.
        if block_type == "text" and isinstance(block.get("text"), str):
            text = _clean_user_text(block["text"]) if kind == "user" else block["text"].strip()
            if text:
                role = "user" if kind == "user" else "assistant"
                clean, found = redact_secrets(_shown(text, root))
                entries.append(_Entry(f"{role}: {clean}", _named_paths(text, cwd), found))
        elif block_type == "tool_use" and kind == "assistant":
            entries.append(_tool_entry(block, cwd, root))
    return entries


def _as_list(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def _clean_user_text(text: str) -> str:
    """The user's own words: reminders stripped, slash commands shown as typed, noise dropped."""
    text = _SYSTEM_REMINDER.sub("", text).strip()
    name = _COMMAND_NAME.search(text)
    if name:
        args = _COMMAND_ARGS.search(text)
        return f"{name.group(1)} {args.group(1)}".strip() if args else name.group(1)
    if text.startswith(_NOISE_PREFIXES):
        return ""
    return text


def _tool_entry(block: Mapping[str, object], cwd: str | None, root: Path | None) -> _Entry:
    name = block.get("name")
    tool = name if isinstance(name, str) and name else "?"
    arguments = block.get("input")
    arguments = arguments if isinstance(arguments, Mapping) else {}
    paths = [
        _absolute(value, cwd)
        for key in _PATH_KEYS
        if isinstance(value := arguments.get(key), str) and value.strip()
    ]
    parts = [f"tool: {tool}"]
    found = 0
    hint = next(
        (v for k in _HINT_KEYS if isinstance(v := arguments.get(k), str) and v.strip()), None
    )
    if hint is not None:
        clean, found = redact_secrets(" ".join(hint.split()))
        parts.append(repr(_cut(clean, TRANSCRIPT_TOOL_HINT_MAX_CHARS)))
    parts.extend(_shown(p, root) for p in paths)
    return _Entry(" ".join(parts), paths, found)


def _absolute(value: str, cwd: str | None) -> str:
    value = value.strip()
    if not os.path.isabs(value) and cwd and os.path.isabs(cwd):
        value = os.path.join(cwd, value)
    return os.path.normpath(value)


def _named_paths(text: str, cwd: str | None) -> list[str]:
    """Absolute paths under the session's cwd that the text names (prose mentions of files)."""
    if not cwd or not os.path.isabs(cwd):
        return []
    prefix = cwd.rstrip("/") + "/"
    found = (m.group(0).rstrip(".:") for m in _ABSOLUTE_PATH.finditer(text))
    return [os.path.normpath(p) for p in found if p.startswith(prefix) and len(p) > len(prefix)]


def _shown(text: str, root: Path | None) -> str:
    """`text` with `root/` prefixes removed, so paths read workspace-relative."""
    if root is None:
        return text
    prefix = str(root).rstrip("/") + "/"
    return text.replace(prefix, "") if prefix != "/" else text


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - len(_CUT), 0)] + _CUT


def _latest(entries: list[_Entry], max_chars: int) -> list[_Entry]:
    """The longest run of latest entries that fits (newline-joined) in `max_chars`; when even
    the last entry alone is too long, that entry cut to fit."""
    kept: list[_Entry] = []
    used = 0
    for entry in reversed(entries):
        cost = len(entry.text) + (1 if kept else 0)
        if used + cost > max_chars:
            break
        kept.append(entry)
        used += cost
    if not kept and entries:
        last = entries[-1]
        kept.append(_Entry(_cut(last.text, max_chars)[:max_chars], last.paths))
    kept.reverse()
    return kept
