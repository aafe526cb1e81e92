"""The durable queue of transcripts waiting to be distilled (SQLite, WAL, in the data dir).

A row is one (workspace, session, transcript content) to learn from:

    pending ──claim──▶ processing ──done──▶ done
       ▲                   │
       └──fail (< 3)───────┤
                           └──fail (3rd)──▶ failed
    processing ──recover (start-up, after a crash)──▶ pending

Enqueueing is idempotent on (workspace, session_id, sha256 of the transcript's bytes): the
same transcript twice adds nothing. A session that grows (the Stop hook fires after every
turn) while its earlier row still waits updates that pending row instead of queueing a second
distillation of mostly the same text. Sessions are remembered with their last activity, so
`gc_sessions` can drop all but the most recent ones together with their rows.

Thread-safe through `SqliteStore`: one connection, one lock, one short transaction per call.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from live_memory.config.constants import (
    TRANSCRIPT_KEEP_SESSIONS,
    TRANSCRIPT_MAX_ATTEMPTS,
)
from live_memory.knowledge.error import KnowledgeError
from live_memory.knowledge.sqlite_store import SqliteStore
from live_memory.knowledge.transcript import read_transcript_bytes

__all__ = ["QueueStatus", "QueuedTranscript", "TranscriptQueue", "content_hash"]

logger = logging.getLogger(__name__)

QueueStatus = Literal["pending", "processing", "done", "failed"]
_STATUSES: tuple[QueueStatus, ...] = ("pending", "processing", "done", "failed")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    workspace TEXT NOT NULL,
    session_id TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    total_enqueued INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (workspace, session_id)
);
CREATE TABLE IF NOT EXISTS transcripts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace TEXT NOT NULL,
    session_id TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    digest TEXT,
    status TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'processing', 'done', 'failed')),
    retries INTEGER NOT NULL DEFAULT 0,
    last_error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (workspace, session_id, content_hash)
);
CREATE INDEX IF NOT EXISTS transcripts_by_status ON transcripts (status, workspace, id);
"""
_COLUMNS = (
    "id, workspace, session_id, transcript_path, content_hash, digest, status, retries, "
    "last_error, created_at, updated_at"
)


@dataclass(frozen=True, slots=True)
class QueuedTranscript:
    """One row of the queue, as claimed by a drain."""

    id: int
    workspace: str
    session_id: str
    transcript_path: str
    content_hash: str
    digest: str | None
    """The digest taken at enqueue time, when the caller stored one; else read the path."""
    status: QueueStatus
    retries: int
    """Failures so far."""
    last_error: str | None
    created_at: float
    updated_at: float


def content_hash(path: Path) -> str:
    """sha256 of the transcript's bytes (as `read_transcript_bytes` reads them, so only a
    regular file, capped). Raises TranscriptError when it cannot be read."""
    return hashlib.sha256(read_transcript_bytes(path)).hexdigest()


class TranscriptQueue(SqliteStore):
    """The transcript queue stored at `path`; safe to share between threads.

    Raises KnowledgeError when the database cannot be opened or written (and after `close()`).
    """

    label = "transcript queue"

    def __init__(self, path: Path, *, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        super().__init__(path, _SCHEMA)

    # --- producing ------------------------------------------------------------------------
    def enqueue(
        self, workspace: str, session_id: str, transcript_path: Path, *, digest: str | None = None
    ) -> int | None:
        """Queue a transcript; returns its row id, or None when this exact content is known.

        Raises TranscriptError when the transcript cannot be read.
        """
        sha = content_hash(transcript_path)
        now = self._clock()
        with self._transaction() as db:
            db.execute(
                "INSERT INTO sessions (workspace, session_id, first_seen, last_seen) "
                "VALUES (?, ?, ?, ?) ON CONFLICT (workspace, session_id) "
                "DO UPDATE SET last_seen = excluded.last_seen",
                (workspace, session_id, now, now),
            )
            known = db.execute(
                "SELECT 1 FROM transcripts WHERE workspace = ? AND session_id = ? "
                "AND content_hash = ?",
                (workspace, session_id, sha),
            ).fetchone()
            if known is not None:
                return None
            waiting = db.execute(
                "SELECT id FROM transcripts WHERE workspace = ? AND session_id = ? "
                "AND status = 'pending' ORDER BY id DESC LIMIT 1",
                (workspace, session_id),
            ).fetchone()
            if waiting is not None:
                row_id = int(waiting[0])
                db.execute(
                    "UPDATE transcripts SET transcript_path = ?, content_hash = ?, digest = ?, "
                    "updated_at = ? WHERE id = ?",
                    (str(transcript_path), sha, digest, now, row_id),
                )
            else:
                cursor = db.execute(
                    "INSERT INTO transcripts (workspace, session_id, transcript_path, "
                    "content_hash, digest, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (workspace, session_id, str(transcript_path), sha, digest, now, now),
                )
                row_id = int(cursor.lastrowid or 0)
            db.execute(
                "UPDATE sessions SET total_enqueued = total_enqueued + 1 "
                "WHERE workspace = ? AND session_id = ?",
                (workspace, session_id),
            )
        logger.info("queued transcript %s of session %s for %s", row_id, session_id, workspace)
        return row_id

    # --- draining -------------------------------------------------------------------------
    def claim(self, workspace: str) -> QueuedTranscript | None:
        """Move the oldest pending row of `workspace` to processing and return it."""
        with self._transaction() as db:
            row = db.execute(
                f"UPDATE transcripts SET status = 'processing', updated_at = ? "
                f"WHERE id = (SELECT id FROM transcripts WHERE workspace = ? "
                f"AND status = 'pending' ORDER BY id LIMIT 1) RETURNING {_COLUMNS}",
                (self._clock(), workspace),
            ).fetchone()
        return _row(row) if row is not None else None

    def done(self, row_id: int) -> bool:
        """Mark a processing row done; False when no such row was processing."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE transcripts SET status = 'done', last_error = NULL, updated_at = ? "
                "WHERE id = ? AND status = 'processing'",
                (self._clock(), row_id),
            )
        return cursor.rowcount == 1

    def fail(self, row_id: int, error: str) -> QueueStatus | None:
        """Record a failed distillation: back to pending, or failed on the third failure.

        Returns the row's new status, None when no such row was processing.
        """
        with self._transaction() as db:
            row = db.execute(
                "UPDATE transcripts SET retries = retries + 1, last_error = ?, updated_at = ?, "
                "status = CASE WHEN retries + 1 >= ? THEN 'failed' ELSE 'pending' END "
                "WHERE id = ? AND status = 'processing' RETURNING status, retries",
                (error, self._clock(), TRANSCRIPT_MAX_ATTEMPTS, row_id),
            ).fetchone()
        if row is None:
            return None
        status: QueueStatus = row[0]
        log = logger.warning if status == "failed" else logger.info
        log("transcript %s failed (%d of %d): %s", row_id, row[1], TRANSCRIPT_MAX_ATTEMPTS, error)
        return status

    def recover(self) -> int:
        """Put rows a crash left in processing back to pending (call at start-up)."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE transcripts SET status = 'pending', updated_at = ? "
                "WHERE status = 'processing'",
                (self._clock(),),
            )
        if cursor.rowcount:
            logger.info("recovered %d transcript(s) left in processing", cursor.rowcount)
        return cursor.rowcount

    # --- reporting and housekeeping -------------------------------------------------------
    def counts(self, workspace: str | None = None) -> dict[str, int]:
        """Rows per status (every status present, zero included), for one workspace or all."""
        where, args = ("WHERE workspace = ?", (workspace,)) if workspace is not None else ("", ())
        with self._transaction() as db:
            rows = db.execute(
                f"SELECT status, COUNT(*) FROM transcripts {where} GROUP BY status", args
            ).fetchall()
        counts: dict[str, int] = dict.fromkeys(_STATUSES, 0)
        counts.update({str(status): int(n) for status, n in rows})
        return counts

    def workspaces_with_pending(self) -> list[str]:
        """Workspaces that have at least one pending row, sorted."""
        with self._transaction() as db:
            rows = db.execute(
                "SELECT DISTINCT workspace FROM transcripts WHERE status = 'pending' "
                "ORDER BY workspace"
            ).fetchall()
        return [str(row[0]) for row in rows]

    def gc_sessions(self, keep: int = TRANSCRIPT_KEEP_SESSIONS) -> int:
        """Delete every session but the `keep` most recently seen, with all their rows.

        Returns the number of sessions deleted.
        """
        if keep < 0:
            raise ValueError(f"keep must be >= 0, got {keep}")
        with self._transaction() as db:
            old = db.execute(
                "SELECT workspace, session_id FROM sessions "
                "ORDER BY last_seen DESC, rowid DESC LIMIT -1 OFFSET ?",
                (keep,),
            ).fetchall()
            db.executemany("DELETE FROM transcripts WHERE workspace = ? AND session_id = ?", old)
            db.executemany("DELETE FROM sessions WHERE workspace = ? AND session_id = ?", old)
        if old:
            logger.info("forgot %d old session(s) and their queued transcripts", len(old))
        return len(old)


def _row(row: tuple[Any, ...]) -> QueuedTranscript:
    row_id, workspace, session_id, path, sha, digest, status, retries, error, created, updated = row
    return QueuedTranscript(
        id=int(row_id),
        workspace=str(workspace),
        session_id=str(session_id),
        transcript_path=str(path),
        content_hash=str(sha),
        digest=digest,
        status=_status(status),
        retries=int(retries),
        last_error=error,
        created_at=float(created),
        updated_at=float(updated),
    )


def _status(value: object) -> QueueStatus:
    for status in _STATUSES:
        if value == status:
            return status
    raise KnowledgeError(f"transcript queue holds an unknown status {value!r}")
