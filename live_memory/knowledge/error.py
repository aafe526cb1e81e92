"""The errors of the knowledge package, hung on the project's one tree (`live_memory.errors`).

LiveMemoryError
├── InputError
│   └── TranscriptError     a transcript cannot be read (missing, a directory, unreadable)
└── KnowledgeError          the queue or usage database, or a markdown knowledge file, cannot be
                            read or written

`TranscriptError` is an `InputError` because the path comes from a caller (the Stop hook's
`transcript_path`), so the HTTP edge answers 422 naming the file; when a queued transcript
disappears before it is drained, the drain records the same message with `fail()`.
"""

from __future__ import annotations

from live_memory.errors import InputError, LiveMemoryError

__all__ = ["KnowledgeError", "TranscriptError"]


class TranscriptError(InputError):
    """A Claude Code transcript could not be read; the message names the file."""


class KnowledgeError(LiveMemoryError):
    """A knowledge store (queue, usage ledger, markdown file) could not be read or written."""
