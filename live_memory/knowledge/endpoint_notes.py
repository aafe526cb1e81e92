"""What the server has learnt about a model endpoint by using it, kept across restarts.

One fact so far: whether the endpoint honours a forced tool call (`tool_choice`). Judged from
the endpoint's kind that is a guess (a gateway or proxy in front of a local model may drop it);
once a question saw a forced call ignored, the cold guard grounds differently on that endpoint
from the next question on, and after a restart too, instead of trying to force again and paying
a model call for a reply that is not a tool call.

Notes are keyed by (endpoint URL, model): a gateway routes by model, so one URL may honour
`tool_choice` for one model and not for another. The file holds at most ENDPOINT_NOTES_MAX rows
(the least recently noted forgotten first); reads come from an in-memory copy loaded at open,
so a question never waits on SQLite to learn what is known.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from live_memory.config.constants import ENDPOINT_NOTE_MAX_CHARS, ENDPOINT_NOTES_MAX
from live_memory.knowledge.sqlite_store import SqliteStore

__all__ = ["EndpointNote", "EndpointNotes"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS endpoint_notes (
    endpoint TEXT NOT NULL,
    model TEXT NOT NULL,
    fact TEXT NOT NULL,
    value TEXT NOT NULL,
    noted_at REAL NOT NULL,
    PRIMARY KEY (endpoint, model, fact)
);
"""


@dataclass(frozen=True, slots=True)
class EndpointNote:
    endpoint: str
    model: str
    fact: str
    value: str
    noted_at: float
    """Unix time of the observation (shown in /stats)."""


_Key = tuple[str, str, str]


class EndpointNotes(SqliteStore):
    """Facts by (endpoint, model, fact) stored at `path`; safe to share between threads.

    Raises KnowledgeError when the database cannot be opened or written (and after `close()`).
    """

    label = "endpoint notes"

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        super().__init__(path, _SCHEMA)
        self._clock = clock
        self._mirror_lock = threading.Lock()
        with self._transaction() as db:
            rows = db.execute(
                "SELECT endpoint, model, fact, value, noted_at FROM endpoint_notes "
                "ORDER BY noted_at DESC LIMIT ?",
                (ENDPOINT_NOTES_MAX,),
            ).fetchall()
        self._known: dict[_Key, EndpointNote] = {(r[0], r[1], r[2]): EndpointNote(*r) for r in rows}

    def get(self, endpoint: str, model: str, fact: str) -> str | None:
        with self._mirror_lock:
            note = self._known.get((endpoint, model, fact))
        return None if note is None else note.value

    def notes_for(self, endpoint: str, model: str) -> list[EndpointNote]:
        with self._mirror_lock:
            return [n for (e, m, _), n in self._known.items() if (e, m) == (endpoint, model)]

    def note(self, endpoint: str, model: str, fact: str, value: str) -> bool:
        """Remember `fact` = `value`; False when it was known already (nothing written)."""
        endpoint, model = endpoint[:ENDPOINT_NOTE_MAX_CHARS], model[:ENDPOINT_NOTE_MAX_CHARS]
        value = value[:ENDPOINT_NOTE_MAX_CHARS]
        key = (endpoint, model, fact)
        if self.get(*key) == value:
            return False
        noted = EndpointNote(endpoint, model, fact, value, self._clock())
        with self._transaction() as db:
            db.execute(
                "INSERT INTO endpoint_notes (endpoint, model, fact, value, noted_at) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (endpoint, model, fact) DO UPDATE SET "
                "value = excluded.value, noted_at = excluded.noted_at",
                (endpoint, model, fact, value, noted.noted_at),
            )
            db.execute(
                "DELETE FROM endpoint_notes WHERE rowid NOT IN (SELECT rowid FROM "
                "endpoint_notes ORDER BY noted_at DESC LIMIT ?)",
                (ENDPOINT_NOTES_MAX,),
            )
        with self._mirror_lock:
            self._known[key] = noted
            while len(self._known) > ENDPOINT_NOTES_MAX:
                oldest = min(self._known.values(), key=lambda n: n.noted_at)
                del self._known[(oldest.endpoint, oldest.model, oldest.fact)]
        return True
