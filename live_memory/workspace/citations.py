"""Which earlier answers read or named which files, so a change can name them.

An answer is remembered with the paths its tool calls read and the workspace paths its text
cites. When one of those files moves on (new bytes, stale, deleted), `changed` returns a note
line for the next observation delta naming those answers (by their question) as possibly out
of date, and forgets the links (one note per answer and change; a later answer that reads the
file again is linked anew). Bounded: the most recent `max_answers` answers, `max_paths` paths
each; a lookup costs the answers linked to that one path. The most recent
`CITED_ANSWERS_SNAPSHOT_MAX` answers go into the snapshot (`to_state` / `restore`), so the links
survive a restart or a passivation.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from live_memory.agent import cited_paths
from live_memory.config import constants as C

__all__ = ["Citations", "Note", "cited_paths"]


@dataclass(frozen=True, slots=True)
class Note:
    """A line for the next observation delta (logged so a concurrent commit keeps it)."""

    text: str


@dataclass(slots=True)
class _Answer:
    label: str
    paths: tuple[str, ...]


class Citations:
    def __init__(
        self,
        max_answers: int = C.CITED_ANSWERS_MAX,
        max_paths: int = C.CITED_PATHS_PER_ANSWER,
        label_chars: int = C.CITED_ANSWER_LABEL_CHARS,
        per_note: int = C.CITED_ANSWERS_PER_NOTE,
    ) -> None:
        self.max_answers, self.max_paths = max_answers, max_paths
        self.label_chars, self.per_note = label_chars, per_note
        self.answers: dict[int, _Answer] = {}
        """Oldest first."""
        self.by_path: dict[str, dict[int, None]] = {}
        self.ids = itertools.count(1)
        self.notes = 0
        """Notes produced (for /stats)."""

    def __contains__(self, path: object) -> bool:
        return path in self.by_path

    def record(self, question: str, paths: Iterable[str]) -> None:
        """An answer was adopted that read or named `paths`."""
        linked = tuple(dict.fromkeys(paths))[: self.max_paths]
        if not linked:
            return
        answer_id = next(self.ids)
        self.answers[answer_id] = _Answer(self._label(question), linked)
        for path in linked:
            self.by_path.setdefault(path, {})[answer_id] = None
        while len(self.answers) > self.max_answers:
            self._forget(next(iter(self.answers)))

    def changed(self, path: str) -> str | None:
        """`path` moved on: a note naming the answers linked to it (None: none)."""
        linked = self.by_path.pop(path, None)
        if not linked:
            return None
        labels = []
        for answer_id in linked:
            answer = self.answers[answer_id]
            answer.paths = tuple(p for p in answer.paths if p != path)
            labels.append(answer.label)
            if not answer.paths:
                del self.answers[answer_id]
        shown = [f'"{label}"' for label in reversed(labels[-self.per_note :])]
        more = len(labels) - len(shown)
        named = ", ".join(shown) + (f" and {more} earlier" if more else "")
        self.notes += 1
        return (
            f"- {path} changed after you answered {named}; those answers may be out of date "
            "(re-check them against the file's current content before repeating them)."
        )

    def clear(self) -> None:
        self.answers.clear()
        self.by_path.clear()

    def to_state(self, limit: int = C.CITED_ANSWERS_SNAPSHOT_MAX) -> list[list[object]]:
        """The most recent `limit` answers as `[label, [path, ...]]`, oldest first."""
        kept = list(self.answers.values())[-limit:] if limit > 0 else []
        return [[answer.label, list(answer.paths)] for answer in kept]

    def restore(self, state: object, limit: int = C.CITED_ANSWERS_SNAPSHOT_MAX) -> None:
        """Links from a snapshot's `to_state`; whatever is malformed is skipped, and every cap
        holds again (the label length, paths per answer, answers kept)."""
        self.clear()
        if not isinstance(state, list):
            return
        for item in state[-limit:] if limit > 0 else []:
            label, paths = _entry(item)
            if label is not None:
                self.record(label, paths)

    def _forget(self, answer_id: int) -> None:
        answer = self.answers.pop(answer_id)
        for path in answer.paths:
            linked = self.by_path.get(path)
            if linked is not None:
                linked.pop(answer_id, None)
                if not linked:
                    del self.by_path[path]

    def _label(self, question: str) -> str:
        flat = " ".join(question.split())
        if len(flat) <= self.label_chars:
            return flat.replace('"', "'")
        return flat[: self.label_chars - 1].replace('"', "'") + "…"


def _entry(item: Any) -> tuple[str | None, list[str]]:
    if not isinstance(item, list) or len(item) != 2:
        return None, []
    label, paths = item
    if not isinstance(label, str) or not isinstance(paths, list):
        return None, []
    return label, [p for p in paths if isinstance(p, str) and p]
