"""What Live Memory learns from conversations and shares as files: transcript digests, the
durable transcript queue, markdown knowledge, usage by day, what endpoints were seen to do
and the session-start banner.

Pure, thread-free logic plus two small thread-safe SQLite stores; the actors and routes that
drive them live elsewhere.
"""

from __future__ import annotations

from live_memory.knowledge.banner import BANNER_PREFIX, health_banner
from live_memory.knowledge.endpoint_notes import EndpointNote, EndpointNotes
from live_memory.knowledge.error import KnowledgeError, TranscriptError
from live_memory.knowledge.fact_merge import FactRow, GcPolicy, decide, eviction_key, gc_victims
from live_memory.knowledge.fact_queries import SearchResult, StoredFact
from live_memory.knowledge.fact_store import FactStore, MergeReport
from live_memory.knowledge.markdown import (
    STALE_MARK,
    export_ledger,
    import_ledger,
    insights_path,
    render_category,
)
from live_memory.knowledge.queue import (
    QueuedTranscript,
    QueueStatus,
    TranscriptQueue,
    content_hash,
)
from live_memory.knowledge.sqlite_store import SqliteStore
from live_memory.knowledge.transcript import TranscriptDigest, digest_transcript
from live_memory.knowledge.usage import UsageLedger, utc_today

__all__ = [
    "BANNER_PREFIX",
    "STALE_MARK",
    "EndpointNote",
    "EndpointNotes",
    "FactRow",
    "FactStore",
    "GcPolicy",
    "KnowledgeError",
    "MergeReport",
    "QueueStatus",
    "QueuedTranscript",
    "SearchResult",
    "SqliteStore",
    "StoredFact",
    "TranscriptDigest",
    "TranscriptError",
    "TranscriptQueue",
    "UsageLedger",
    "content_hash",
    "decide",
    "digest_transcript",
    "eviction_key",
    "export_ledger",
    "gc_victims",
    "health_banner",
    "import_ledger",
    "insights_path",
    "render_category",
    "utc_today",
]
