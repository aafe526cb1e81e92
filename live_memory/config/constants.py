"""Every tunable and default of Live Memory, in one reviewable place.

User-facing settings (the LIVE_MEMORY_* variables) take their defaults from here; internal
knobs live here too so no module carries a magic number. Sections are grouped by concern.
"""

from __future__ import annotations

from typing import Final

# --- server -------------------------------------------------------------------------------
DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_PORT: Final = 7711
DATA_DIR_ENV_FALLBACK: Final = "CLAUDE_PLUGIN_DATA"
DEFAULT_DATA_DIR: Final = "~/.local/share/live-memory"
CONFIG_FILE_NAME: Final = "config.json"
SNAPSHOT_DIR_NAME: Final = "workspaces"
QUARANTINE_DIR_NAME: Final = "quarantine"
LOCK_FILE_NAME: Final = "serve-{port}.lock"
LOOPBACK_HOSTS: Final = ("127.0.0.1", "localhost", "::1", "[::1]")
ENV_PREFIX: Final = "LIVE_MEMORY_"

# --- request limits -----------------------------------------------------------------------
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
# A refused body is read and dropped up to this much, so the client gets a readable 413
# instead of a connection reset (beyond it the connection is dropped).
BODY_DRAIN_MAX_BYTES: Final = 64 * 1024 * 1024
MIN_BODY_BYTES: Final = 1024
REQUEST_BODY_TIMEOUT_S: Final = 10.0
MAX_CONNECTIONS: Final = 512  # LIVE_MEMORY_MAX_CONNECTIONS: past it, a newcomer sheds one
MIN_CONNECTIONS: Final = 4
CONNECTION_HEADROOM: Final = 64  # connections past MAX_CONNECTIONS when all are busy serving
HEALTH_RESERVE: Final = 16  # past the headroom: connections whose head is read for /health only
MAX_HEADER_BYTES: Final = 64 * 1024  # request line + headers; beyond: 431 and close
JSONRPC_METHOD_MAX_CHARS: Final = 256  # longer MCP method names are refused, not echoed
JSONRPC_ECHO_MAX_CHARS: Final = 64  # at most this much of a caller's input in an error
KEEP_ALIVE_TIMEOUT_S: Final = 5.0  # idle keep-alive connections are closed after this
DATA_UMASK: Final = 0o077  # files the server creates are readable by their owner only
MAX_NOTIFY_EVENTS: Final = 1000
MAX_QUESTION_CHARS: Final = 20_000
MAX_IMPORT_FACTS: Final = 2_000  # facts per /api/import (413 beyond)
MAX_LEDGER_FACTS: Final = 2_000  # facts a workspace ledger holds; imports/learning stop there
MIN_ANSWER_TOKENS: Final = 64
MAX_ANSWER_TOKENS_CAP: Final = 16_384
DEFAULT_MAX_ANSWER_TOKENS: Final = 2048
EDGE_REPLY_TIMEOUT_S: Final = 5.0  # quick actor replies (stats, notify, resolve)
# An import's reply waits for its store merge (up to MAX_IMPORT_FACTS facts, off the actor).
IMPORT_REPLY_TIMEOUT_S: Final = 120.0
EDGE_HANDLE_CACHE_SIZE: Final = 4096  # cwd -> workspace actor handles the edge remembers
# /notify for a held workspace: events gathered on the event loop, one Notify per actor per
# batch (gateway/notify_batch); flushed after the delay, at either cap, or before any other
# message the edge sends to a workspace.
NOTIFY_BATCH_DELAY_S: Final = 0.025
NOTIFY_BATCH_MAX_EVENTS: Final = 256
NOTIFY_BATCH_MAX_BYTES: Final = 4 * 1024 * 1024  # content bytes held by one batch
# Content told to one workspace actor and not yet known applied (its mailbox); past it /notify
# waits for the actor. 8 concurrent hooks teeing 96 KB reads outran it: +240 MB, /stats 504.
NOTIFY_BACKLOG_MAX_BYTES: Final = 8 * 1024 * 1024
NOTIFY_BACKLOG_WORKSPACES_MAX: Final = 1024  # actors whose backlog is counted at once
RESOLVE_CACHE_SIZE: Final = 4096  # cwd -> workspace root resolutions the gateway remembers

# --- questions and the agent loop ---------------------------------------------------------
DEFAULT_TIMEOUT_S: Final = 60.0
HARD_DEADLINE_MARGIN_S: Final = 15.0  # hard backstop = soft budget + margin (< MCP timeout)
DEFAULT_MCP_TIMEOUT_S: Final = 120.0  # the plugin's .mcp.json "timeout" (120000 ms)
MAX_AGENT_ITERATIONS: Final = 25
MIN_CALL_TIMEOUT_S: Final = 1.0  # never give one provider call less than this
COLD_LEDGER_MAX_CHARS: Final = 40  # a ledger this short counts as "empty" for the cold guard
GROUNDING_SEARCH_MAX_TERMS: Final = 3  # identifiers the guard's own search looks for
GROUNDING_SEARCH_HEAD_LIMIT: Final = 40  # matching lines it shows the model
GROUNDING_SEARCH_MAX_CHARS: Final = 6_000  # of search output put into the prompt
TEXT_CALL_MAX_CHARS: Final = 64_000  # of a reply examined for a tool call written as text
TEXT_CALL_MAX_CANDIDATES: Final = 8  # tag/fence bodies decoded per reply
TEXT_CALL_MAX_PREAMBLE_CHARS: Final = 600  # prose allowed before a bare JSON call
MAX_PENDING_QUESTIONS: Final = 32  # per workspace, waiting for admission
DEFAULT_CONCURRENCY: Final = "parallel"
DEFAULT_MAX_PARALLEL_QUERIES: Final = 4
ASYNC_JOB_TTL_S: Final = 3600.0

# --- tools --------------------------------------------------------------------------------
TOOL_OUTPUT_MAX_CHARS: Final = 60_000
READ_DEFAULT_LIMIT_LINES: Final = 2000
READ_MAX_LINE_CHARS: Final = 2000
GREP_DEFAULT_HEAD_LIMIT: Final = 200
GLOB_DEFAULT_LIMIT: Final = 200
FIND_PATHS_DEFAULT_LIMIT: Final = 200
FIND_PATHS_DEFAULT_DEPTH: Final = 4
GIT_SEARCH_DEFAULT_LIMIT: Final = 20
GIT_SEARCH_MAX_PATCH_CHARS: Final = 20_000
TOOL_SUBPROCESS_TIMEOUT_S: Final = 20.0
BINARY_SNIFF_BYTES: Final = 8192
QUESTION_TOOL_RESULT_TOKEN_BUDGET: Final = 60_000  # per question, over all tool results
READ_MAX_FILE_BYTES: Final = 8 * 1024 * 1024  # Read refuses bigger files
JAIL_REALPATH_PASSES: Final = 8  # realpath passes to a fixed point (links past a loop)
GREP_MAX_FILE_BYTES: Final = 8 * 1024 * 1024  # the Python fallback (no rg) skips bigger files
GREP_REDACT_CONTEXT_LINES: Final = 64  # lines before a shown one redacted with it (PEM blocks)
GREP_MAX_LINE_CHARS: Final = 400  # a matching line is cut here in content mode
GREP_OPEN_FILES_MAX: Final = 256  # content mode: shown files open at once (RLIMIT_NOFILE: 1024)
GREP_READ_BLOCK_BYTES: Final = 256 * 1024  # content mode reads a shown file's lines in blocks
# content mode's one `rg -n` walk stops past this much output: a -c walk then counts, and rg
# numbers only the files shown (one record is ~35 bytes plus the path; 20k files: ~17 MB)
GREP_NUMBERED_WALK_MAX_BYTES: Final = 1024 * 1024
TOOL_MAX_RESULT_LIMIT: Final = 2000  # upper bound for head_limit / limit arguments
FIND_PATHS_MAX_DEPTH: Final = 32
GIT_SEARCH_MAX_LIMIT: Final = 100
# the listing walk outside git never enters these (vendored ones: `live_memory.vendored`)
NON_GIT_SKIP_DIRS: Final = (".git", ".hg", ".svn")

# --- window, budget, compaction ----------------------------------------------------------
CHARS_PER_TOKEN: Final = 4.0
CALIBRATION_EMA_ALPHA: Final = 0.3
CALIBRATION_MIN: Final = 2.0
CALIBRATION_MAX: Final = 8.0
DEFAULT_COMPACTION_THRESHOLD: Final = 0.85
DEFAULT_COMPACTION_FLOOR: Final = 0.6
DIRECTORY_TREE_SHARE: Final = 0.10
DIRECTORY_TREE_MAX_WALK_ENTRIES: Final = 200_000
LISTING_SUBMODULE_MAX_DEPTH: Final = 4  # submodules inside submodules listed this deep
LISTING_MAX_SUBMODULES: Final = 256  # submodules of one repository whose files are listed
DISTILL_MIN_INTERVAL_S: Final = 60.0
LEDGER_MAX_TOKENS: Final = 2048
SUMMARY_MAX_INPUT_CHARS: Final = 200_000
RECENT_QA_KEPT_AT_COMPACTION: Final = 2  # Q/A pairs tier 2 keeps verbatim
SUMMARY_MAX_CHUNKS_PER_COMPACTION: Final = 4  # tier 2 folds at most this many chunks per run
DELTA_REFREEZE_SHARE: Final = 0.25  # deltas past this share of the window: re-freeze instead
MANIFEST_MAX_FILES: Final = 20_000  # files a window remembers; the LRU bare entry goes first
# The manifest's lines, at most this share of the window (nominal chars per token): a long
# session reads thousands of distinct files, and 20,000 paths were 1.2-3.4x a 200k window.
MANIFEST_MAX_SHARE: Final = 0.10
FALLBACK_CONTEXT_TOKENS: Final = 128_000

# --- passive ingestion and watching ------------------------------------------------------
PASSIVE_MAX_FILE_BYTES: Final = 256 * 1024
# Observed file content one workspace holds (LIVE_MEMORY_MAX_HELD_BYTES), and never more than
# this share of the compaction floor: past it the least recently used content is shed at
# ingest, without a model call (the files stay in the manifest, re-readable from disk).
MAX_HELD_BYTES: Final = 1024 * 1024
HELD_BYTES_SHARE_OF_FLOOR: Final = 0.5
PRELOAD_MAX_TOTAL_BYTES: Final = 2 * 1024 * 1024
WATCH_DEBOUNCE_S: Final = 0.2
# A held file changed on disk is re-read by the server itself (workspace/rereads.py): one
# batch in flight per workspace, coalesced per path, at most this many paths per interval
# (a storm of edits costs bounded reads; the rest wait, hinted to questions meanwhile).
REREAD_MAX_PER_INTERVAL: Final = 64
REREAD_INTERVAL_S: Final = 1.0
REREAD_BATCH_MAX: Final = 16
# Earlier answers and the paths they read or named (workspace/citations.py): when one of
# those paths changes, the next delta names those answers as possibly out of date.
CITED_ANSWERS_MAX: Final = 256  # answers remembered per workspace, the oldest forgotten first
CITED_PATHS_PER_ANSWER: Final = 32
CITED_ANSWER_LABEL_CHARS: Final = 80  # an answer is named by its question, cut to this
CITED_ANSWERS_PER_NOTE: Final = 5  # answers named per changed path; the rest are counted
# The most recent answers whose links the snapshot keeps, so a restart or passivation still
# names them when a file they cited changes (bounds the snapshot: ~128 x (80 + 32 paths)).
CITED_ANSWERS_SNAPSHOT_MAX: Final = 128
PENDING_NOTES_MAX: Final = 64  # delta notes waiting for the next question; the oldest dropped
WATCH_MAX_DELAY_S: Final = 1.0  # a path written non-stop is still flushed this often
WATCH_GIT_TIMEOUT_S: Final = 10.0  # check-ignore, rev-parse, diff run by the watcher
WATCH_STUCK_AFTER_S: Final = 3 * WATCH_GIT_TIMEOUT_S  # one message longer: /health degraded
WATCH_STOP_TIMEOUT_S: Final = 2.0  # joining the OS observer's thread on shutdown
# Watches are budgeted (one per watched directory): the kernel's per-user limit
# (/proc/sys/fs/inotify/max_user_watches) is shared with the user's IDEs and tools.
WATCH_MAX_PER_ROOT: Final = 16_384
WATCH_MAX_TOTAL: Final = 65_536
WATCH_MAX_SHARE_OF_USER_LIMIT: Final = 0.25  # never more than this share of the user's limit
WATCH_USER_LIMIT_FILE: Final = "/proc/sys/fs/inotify/max_user_watches"
WATCH_FALLBACK_POLL_S: Final = 5.0  # a root without watches re-checks its window's files
# A flush with more paths than this is a storm (checkout, npm ci): one re-validation of the
# window's own files replaces routing every path, repeated while it lasts.
WATCH_STORM_PATHS: Final = 1_000
WATCH_STORM_WINDOW_S: Final = 1.0  # ... settling within this long
WATCH_STORM_RATE_SLOTS: Final = 256  # flushes remembered for that rate (bounded)
WATCH_STORM_REVALIDATE_S: Final = 1.0
WATCH_STORM_QUIET_S: Final = 1.0
WATCH_TREE_STALE_PATHS: Final = 500  # files added or removed before the tree is rebuilt
WATCH_IGNORE_FILE_MAX_BYTES: Final = 1024 * 1024  # a .gitignore / exclude file read at most
WATCH_IGNORE_CACHE_MAX: Final = 200_000  # directory ignore verdicts kept per repository
RECENTLY_MODIFIED_HINT_MAX: Final = 50
# By class: env files (`.env`, `.env.prod`, `.env-prod`, `prod.env`, `.flaskenv`, `.envrc`),
# keys and keystores, credential stores and CLI token caches, infrastructure variables.
DEFAULT_SECRET_PATH_PATTERNS: Final = (
    ".env*",
    "*.env",
    ".flaskenv",
    "*.tfvars",
    "*.tfvars.json",
    "credentials.csv",
    "*_credentials.csv",
    "*accesskeys.csv",
    "*.docker/config.json",
    "*.kube/config",
    "kubeconfig",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    ".netrc",
    ".npmrc",
    ".pypirc",
    "credentials",
    "credentials.json",
    "*.credentials",
    ".git-credentials",
    "secrets.*",
    ".pgpass",
    "*.ppk",
    ".htpasswd",
    ".s3cfg",
    ".boto",
    ".dockercfg",
    "*.jks",
    "*.keystore",
    "*.p8",
    "*.kdbx",
    "*.tfstate",
    "*.tfstate.*",
    "application_default_credentials.json",
    "credentials.db",
    "access_tokens.db",
    "accessTokens.json",
    "msal_token_cache.json",
    ".vault-token",
)
SECRET_REDACTION: Final = "[redacted: looks like a secret]"
SECRET_VALUE_MIN_CHARS: Final = 8  # shorter quoted values are never called secrets
SECRET_BARE_VALUE_MIN_CHARS: Final = 12  # unquoted `key: value` needs a longer value
BINARY_INVALID_UTF8_RATIO: Final = 0.3  # above this share of undecodable chars, a file is binary

# --- snapshots ----------------------------------------------------------------------------
SNAPSHOT_FORMAT_VERSION: Final = 1
SNAPSHOT_SUFFIX: Final = ".json"
SNAPSHOT_UNSETTLED_SUFFIX: Final = ".pending"  # appended: a save waiting for its fsync
SNAPSHOT_HEAD_BYTES: Final = 8192  # what listing the stored workspaces reads of each file
# A snapshot larger is refused on restore (quarantined): one of a 1M-token window is ~5-10 MB,
# and a tampered 100 MB history became one 26M-token prompt.
SNAPSHOT_MAX_BYTES: Final = 32 * 1024 * 1024

# --- actors -------------------------------------------------------------------------------
PASSIVATE_AFTER_IDLE_S: Final = 900.0
PASSIVATION_SWEEP_S: Final = 30.0
# Workspaces active at once (LIVE_MEMORY_WORKSPACES_ACTIVE_MAX). The allocator keeps the pages
# of the most ever active at once, so this bounds what any number of passivated ones leave
# (1,000 one after another: bench/workspaces_at_scale.py), the live windows and the actor
# threads (one per active workspace). Past it the least recently used idle workspace is
# passivated early (actors/passivation.py); a reactivation restores its snapshot.
WORKSPACES_ACTIVE_MAX: Final = 64
SHUTDOWN_GRACE_S: Final = 20.0
MCP_DRAIN_S: Final = 20.0
# A POST /mcp is answered as one JSON body (not SSE, whose pings keep a client's read timer
# alive) only while a question's hard backstop is within this: under the Python MCP client's
# 300 s HTTP read timeout, the shortest we know.
MCP_JSON_REPLY_MAX_WAIT_S: Final = 240.0
"""SIGTERM: how long MCP questions in flight may run on before the MCP session manager stops."""
MANIFEST_SNAPSHOT_DEBOUNCE_S: Final = 5.0
"""A notification's manifest change is snapshotted at the next sweep at least this old."""
NOTIFY_LOG_MAX_BYTES: Final = 8 * 1024 * 1024
"""Content the replay log of one workspace holds while forks run; older bytes shed first."""
ACTOR_STOP_TIMEOUT_S: Final = 10.0
# What one workspace may cost in Python objects (tracemalloc bytes): while it is active, and
# what it leaves once passivated. The workspaces active at once leave their peak in the
# allocator's pages (bench/workspaces_at_scale.py shows the RSS), so what any number of
# passivated ones keep is bounded by WORKSPACES_ACTIVE_MAX times the active figure plus the
# passivated figure each; no threading primitive is kept per workspace (an Event is ~1 KB).
# tests/gateway/test_service_passivation.py holds the server to both. The active figure
# includes the workspace's pykka ThreadingActor (thread, inbox Queue, stop Event: ~8 KB).
WORKSPACE_ACTIVE_PYTHON_BYTES_MAX: Final = 20_000
WORKSPACE_PASSIVATED_PYTHON_BYTES_MAX: Final = 2_500

# --- providers ----------------------------------------------------------------------------
PROVIDER_ANTHROPIC: Final = "anthropic"
PROVIDER_OPENAI: Final = "openai"
ANTHROPIC_DEFAULT_MODEL: Final = "claude-haiku-4-5"
OPENAI_DEFAULT_MODEL: Final = "gpt-5-mini"
# Claude Haiku 4.5 as the cloud platforms name it (Bedrock: the global inference profile).
BEDROCK_DEFAULT_MODEL: Final = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
VERTEX_DEFAULT_MODEL: Final = "claude-haiku-4-5@20251001"
ANTHROPIC_DEFAULT_BASE_URL: Final = "https://api.anthropic.com"
OPENAI_DEFAULT_BASE_URL: Final = "https://api.openai.com/v1"
PROVIDER_MAX_RETRIES: Final = 3
RETRY_BASE_DELAY_S: Final = 0.5
RETRY_MAX_DELAY_S: Final = 8.0
RETRY_JITTER: Final = 0.25
PROVIDER_CONNECT_TIMEOUT_S: Final = 10.0
PROVIDER_DEFAULT_TIMEOUT_S: Final = 120.0
MAX_CACHE_BREAKPOINTS: Final = 4
DEFAULT_CACHE_READ_MULT: Final = 0.10
DEFAULT_CACHE_WRITE_MULT: Final = 1.25
CACHE_WRITE_1H_MULT: Final = 2.0  # 1-hour cache writes, as a multiple of input (overrides only)
RETRY_AFTER_MAX_S: Final = 30.0  # never wait longer than this on a server's retry-after
DEFAULT_MIN_CACHEABLE_TOKENS: Final = 1024  # unknown models: shortest prefix worth a breakpoint
ANTHROPIC_OAUTH_BETA: Final = "oauth-2025-04-20"  # anthropic-beta header for subscription tokens
# After a stream's message_stop: how long the body's end is waited for (providers/stream_tail, so
# the connection is kept for the next call), else the connection is closed.
STREAM_TAIL_WAIT_S: Final = 0.25
# Claude Code's public OAuth client id (the CLIENT_ID constant of the Claude Code CLI, as quoted
# by many public tools that refresh its credential); the token endpoint refuses a refresh grant
# without it. Anthropic may rotate it: LIVE_MEMORY_OAUTH_TOKEN_URL moves the endpoint only.
CLAUDE_OAUTH_CLIENT_ID: Final = "9d1c250a-e61b-44d9-88ed-5944d1962f5e"
# The console's token endpoint (console.anthropic.com is now platform.claude.com).
CLAUDE_OAUTH_TOKEN_URL: Final = "https://platform.claude.com/v1/oauth/token"
OAUTH_STORE_FILE_NAME: Final = "oauth.json"  # refreshed subscription tokens, in the data dir
# Refresh this long before expiry. Shorter than Claude Code's own lead (~5 min), so a running
# Claude Code refreshes first and we adopt its token instead of spending its refresh token.
OAUTH_REFRESH_MARGIN_S: Final = 180.0
OAUTH_REFRESH_TIMEOUT_S: Final = 15.0
OAUTH_REFRESH_RETRY_S: Final = 30.0  # after a failed refresh, wait this long before another
OAUTH_DEFAULT_EXPIRES_S: Final = 3600.0  # when the token endpoint omits expires_in
OPENAI_PROMPT_CACHE_RETENTION: Final = "24h"  # sent only to models known to accept it

# --- spend guardrails ---------------------------------------------------------------------
BUDGET_BACKGROUND_STOP_FRACTION: Final = 0.9  # keep-warm and distillation stop at 90% spent

# --- keep-warm ----------------------------------------------------------------------------
DEFAULT_KEEP_WARM_MAX_IDLE_S: Final = 1800.0
KEEP_WARM_MARGIN_S: Final = 60.0  # ping this long before the cache would expire (5 min -> 240 s)
KEEP_WARM_TICK_S: Final = 5.0
KEEP_WARM_MIN_TICK_S: Final = 0.25
KEEP_WARM_PING_MAX_TOKENS: Final = 1
KEEP_WARM_PING_OVERHEAD_TOKENS: Final = 64  # a ping's uncached trailing turn plus its one output
CACHE_TTL_5M_S: Final = 300.0
CACHE_TTL_1H_S: Final = 3600.0
OPENAI_CACHE_LIFETIME_S: Final = 300.0  # in-memory retention: "cleared after 5-10 min idle"
OPENAI_EXTENDED_CACHE_LIFETIME_S: Final = 24 * 3600.0
DEEPSEEK_CACHE_LIFETIME_S: Final = 6 * 3600.0  # "a few hours to a few days"; the low end

# --- logging ------------------------------------------------------------------------------
DEFAULT_LOG_LEVEL: Final = "info"
LOG_MAX_BYTES: Final = 512 * 1024
LOG_BACKUP_COUNT: Final = 3
NOISY_LOGGERS: Final = (
    "httpx",
    "httpcore",
    "httpx2",
    "httpcore2",
    "mcp.server.streamable_http",
    "watchdog",
)
"""Libraries whose INFO chatter (per request / per stateless MCP session) is held to WARNING.
httpx2 (the providers' client) logs a line per provider call at INFO: a tenth of the I/O loop's
CPU per question, and an unbounded stream of lines in the journal."""

# --- configuration loading ----------------------------------------------------------------
MIN_CONTEXT_TOKENS: Final = 1024
MAX_PARALLEL_QUERIES_CAP: Final = 64
ANTHROPIC_KEY_PREFIX: Final = "sk-ant-"
CLAUDE_CONFIG_DIR_ENV: Final = "CLAUDE_CONFIG_DIR"
CLAUDE_HOME_DIR_NAME: Final = ".claude"
CLAUDE_CREDENTIALS_FILE_NAME: Final = ".credentials.json"
CREDENTIALS_MAX_BYTES: Final = 1024 * 1024

# --- cli and plugin -----------------------------------------------------------------------
CLI_REQUEST_TIMEOUT_S: Final = 10.0  # status, stats, actors, reset, empty, reload
CLI_ASK_TIMEOUT_S: Final = DEFAULT_MCP_TIMEOUT_S + 30.0  # a local model may use all of it
SYSTEMD_UNIT_NAME: Final = "live-memory.service"
LAUNCHD_LABEL: Final = "com.live-memory"
SERVICE_ENV_FILE: Final = "~/.config/live-memory/env"

# --- knowledge and transcripts ------------------------------------------------------------
KNOWLEDGE_CATEGORIES: Final = ("architecture", "convention", "decision", "gotcha", "task")
TRANSCRIPT_QUEUE_FILE_NAME: Final = "transcripts.sqlite3"  # in the data dir
USAGE_FILE_NAME: Final = "usage.sqlite3"  # in the data dir
FACT_STORE_FILE_NAME: Final = "facts.sqlite3"  # in the data dir: every workspace's facts
MAX_STORED_FACTS: Final = 50_000  # facts one workspace's store keeps; GC past it (fact_merge)
FACT_RETIRE_AFTER_S: Final = 30 * 86_400.0  # superseded/demoted this long: collected anyway
# An import's store merge runs off the workspace actor, in transactions of this many facts: the
# store's lock is released between them, so a question's search or a wipe waits one chunk.
FACT_MERGE_CHUNK_FACTS: Final = 200
RESIDENT_FACTS_SHARE: Final = 0.08  # of the window: the frozen block's most-used facts
RECALL_MAX_FACTS: Final = 12  # facts one question's retrieval delta appends at most
RECALL_QUERY_DEADLINE_S: Final = 0.25  # a store search past this returns nothing
SUMMARY_STORE_CHUNK_SHARE: Final = 1.0  # with the store: material per summary, x its output cap
SUMMARY_MAX_CHUNKS_WITH_STORE: Final = 16  # with the store: summaries one compaction may make
TRANSCRIPT_DIGEST_MAX_CHARS: Final = 24_000  # one digest handed to the summariser
TRANSCRIPT_ENTRY_MAX_CHARS: Final = 2_000  # one ask or conclusion; a pasted log is cut here
TRANSCRIPT_TOOL_HINT_MAX_CHARS: Final = 160  # a Bash command or Grep pattern shown with the tool
TRANSCRIPT_MAX_ATTEMPTS: Final = 3  # a queued transcript that fails this often ends as failed
SESSION_SUMMARY_MAX_CHARS: Final = 1500  # the opt-in session-start memory summary
TRANSCRIPT_MAX_BYTES: Final = 32 * 1024 * 1024  # longer transcripts are read from their tail
TRANSCRIPT_KEEP_SESSIONS: Final = 30  # start-up gc keeps the rows of this many recent sessions
SQLITE_BUSY_TIMEOUT_S: Final = 5.0
BLOCKING_CALL_THREADS: Final = 4  # the edge's pool for SQLite and file-system calls
USAGE_BY_DAY_DEFAULT_DAYS: Final = 30

# --- the plugin's spool, replayed by the server (gateway/spool_replay.py) ------------------
SPOOL_DIR_NAME: Final = "spool"  # the hooks' spool directory is always named so
SPOOL_FILE_NAME: Final = "events.jsonl"  # = plugin/scripts/notify.py's Spool.path
SPOOL_LOCK_NAME: Final = ".lock"  # the flock the hooks take around the spool
SPOOL_REPLAY_MAX_BYTES: Final = 16 * 1024 * 1024  # = the hooks' SPOOL_MAX_BYTES
SPOOL_REPLAY_MAX_LINES: Final = 500  # = the hooks' SPOOL_MAX_EVENTS
SPOOL_LOCK_WAIT_S: Final = 2.0
SPOOL_REGISTRY_FILE_NAME: Final = "spools.json"  # in the data dir: spools to replay at start
SPOOL_REGISTRY_MAX: Final = 16  # most recently seen spool directories kept

# --- operator dashboard (/ui) ---------------------------------------------------------------
DASHBOARD_RECENT_QUESTIONS: Final = 20  # per workspace, kept in its snapshot's counters
DASHBOARD_COMPACTION_LOG: Final = 20  # compactions remembered per workspace (its timeline)
DASHBOARD_QUESTION_PREVIEW_CHARS: Final = 160  # a recent question as shown (redacted first)
DASHBOARD_MAX_WORKSPACES: Final = 200  # stored workspaces per overview page (newest first)
DASHBOARD_MAX_PAGE: Final = 100_000  # a larger ?page= is refused (400)
DASHBOARD_MAX_FACTS: Final = 300  # ledger facts on a workspace page (the search narrows first)
DASHBOARD_MAX_FILES: Final = 300  # file contexts on a workspace page
DASHBOARD_SEARCH_MAX_CHARS: Final = 200  # a longer ledger search is refused (400)
DASHBOARD_DAYS: Final = 14  # days in the tokens/cost chart
DEFAULT_DASHBOARD_STUCK_ACTOR_S: Final = 30.0  # an actor busy on one message longer: "stuck"
DASHBOARD_POLL_S: Final = 2.0  # the actors page refreshes this often while it is visible
DASHBOARD_LOGIN_TTL_S: Final = 120.0  # a one-time login link from `live-memory dashboard`
DASHBOARD_MAX_LOGIN_LINKS: Final = 16  # unused links held; the oldest is forgotten first
DASHBOARD_SESSION_TTL_S: Final = 12 * 3600.0
DASHBOARD_MAX_SESSIONS: Final = 32  # browser sessions held; the oldest is logged out first
DASHBOARD_SESSION_COOKIE: Final = "lm_session"
DASHBOARD_FORM_MAX_BYTES: Final = 8 * 1024  # an action's form body

# --- retrieval delta and the structural symbol index (live_memory/index) --------------------
# The per-question retrieval delta (facts and symbols together) appended before a question.
RETRIEVAL_DELTA_MAX_CHARS: Final = 6_000
# Source files bigger than this are listed as skipped, not parsed (generated/minified code).
INDEX_MAX_FILE_BYTES: Final = 512 * 1024
INDEX_MAX_FILES: Final = 200_000  # files one workspace's index holds; past it, no new files
INDEX_MAX_DEFS_PER_FILE: Final = 400
INDEX_MAX_REFS_PER_FILE: Final = 1_000  # distinct referenced names kept per file
INDEX_SIGNATURE_MAX_CHARS: Final = 160
INDEX_DOC_MAX_CHARS: Final = 120
# The background pass: one dedicated thread for the whole server (never the actor pool), a
# bounded slice of files per turn, then a pause so it uses at most this share of one core.
INDEX_SLICE_FILES: Final = 64
INDEX_SLICE_MAX_S: Final = 0.25
INDEX_CPU_SHARE: Final = 0.5
# Memory: a slice's parsed rows are written and dropped before the next; SQLite's page cache is
# capped per database (KiB, as PRAGMA cache_size takes negative numbers).
INDEX_SQLITE_CACHE_KIB: Final = 8_192
# Workspace indexes with an open SQLite connection at once (each costs 130-175 KB of C heap,
# which the allocator keeps as a high-water mark); past it the least recently used is closed
# and re-opens on its next use (index/open_stores.py: 1-4 ms). 16 -> 8 took 1,000 passivated
# workspaces from +13.9 to +10.6 MB of RSS past a warm-up (bench/workspaces_at_scale.py).
INDEX_OPEN_DATABASES_MAX: Final = 8
INDEX_QUEUE_MAX: Final = 4_096  # incremental updates waiting for the index thread
INDEX_QUEUE_MAX_CONTENT_BYTES: Final = 8 * 1024 * 1024  # teed bytes they hold; past it: from disk
# The index database's WAL is checkpointed by the index thread when its queue is empty and
# this many write transactions are in the WAL (never inside an update: SQLite's automatic
# 4 MB checkpoint made one ~2 ms update take 40-90 ms), and at the latest after
# INDEX_WAL_CHECKPOINT_WRITES (a storm without an idle moment).
INDEX_WAL_IDLE_CHECKPOINT_WRITES: Final = 32
INDEX_WAL_CHECKPOINT_WRITES: Final = 200
INDEX_TEED_MEMO_MAX: Final = 512  # teed paths per workspace whose indexed bytes are remembered
# Paths per workspace whose last read from disk is remembered by its stat (index/stat_memo.py:
# an unchanged file then costs a stat, not a read and a hash). A stat is trusted only when the
# file's mtime and ctime are older than this when it is taken: git's racy-clean rule, with a
# margin for coarse timestamps (2 s on FAT; one clock tick on Linux file systems).
INDEX_STAT_MEMO_MAX: Final = 1_024
INDEX_STAT_RACY_S: Final = 2.0
# The index database's format (PRAGMA user_version). A database of an older format is emptied
# and rebuilt by the next pass: format 1 stores signatures and doc lines redacted.
INDEX_FORMAT_VERSION: Final = 1
# The core map in the stable prefix (after the directory tree): at most this share of the
# window and this many characters; ranked by how many files reference each definition.
CORE_MAP_SHARE: Final = 0.05
CORE_MAP_MAX_CHARS: Final = 24_000
CORE_MAP_CANDIDATES: Final = 2_000
# The per-question symbol lookup: identifiers of the question looked up in the index.
SYMBOL_LOOKUP_MAX_NAMES: Final = 12
SYMBOL_FIND_MEMO_MAX: Final = 256  # question look-ups (6 rows at most each) an index remembers
SYMBOL_LOOKUP_MAX_HITS: Final = 24
SYMBOL_LOOKUP_PER_NAME: Final = 6
# A longer token of a question, fact or answer names no identifier (fact keys, symbol lookup,
# grounding): it is skipped whole, so no pattern walks it more than a bounded distance.
MAX_IDENTIFIER_CHARS: Final = 256
MAX_KEY_SCAN_CHARS: Final = 32_768  # of a question or fact, the part names are looked for in
FIND_SYMBOL_DEFAULT_LIMIT: Final = 50
OUTLINE_MAX_ENTRIES: Final = 400
# --- local model servers: probe, streaming, measured speed (docs/LOCAL_MODELS.md) ----------
STREAM_TAP_MAX_CHARS: Final = 64 * 1024  # partial answer a streaming call keeps for a deadline
ENDPOINT_PROBE_TIMEOUT_S: Final = 3.0  # one probe request (a local server answers in ms)
ENDPOINT_PROBE_TOTAL_S: Final = 10.0  # every probe request of one endpoint together
ENDPOINT_PROBE_MAX_BYTES: Final = 256 * 1024  # a probe reply read past this is dropped
ENDPOINT_PROBE_MAX_MODELS: Final = 256  # model entries of a /v1/models reply looked at
# Output caps scale with the window: one default Read filled half of a 32k local window.
TOOL_OUTPUT_SHARE_OF_WINDOW: Final = 0.08  # one tool result, at most this share of the window
TOOL_BUDGET_SHARE_OF_WINDOW: Final = 0.30  # all of one question's tool results
MIN_TOOL_OUTPUT_CHARS: Final = 2_000  # never cap one tool result below this
MIN_TOOL_BUDGET_TOKENS: Final = 1_000
MCP_TIMEOUT_SAFETY_S: Final = 5.0  # the hard backstop ends this long before the MCP timeout
SPEED_EWMA_ALPHA: Final = 0.3  # weight of the newest prefill / generation speed sample
SPEED_MIN_SAMPLE_TOKENS: Final = 16  # a sample over fewer tokens says nothing about speed
SPEED_BUDGET_FACTOR: Final = 1.5  # the soft budget: this many times the predicted time
SPEED_CALLS_PER_QUESTION: Final = 2.0  # calls a question is planned for (answer + one tool)
SPEED_MAX_ENDPOINTS: Final = 16  # endpoints whose speed the server remembers
PROGRESS_HEARTBEAT_S: Final = 10.0  # an MCP progress report at least this often (read timers)
PROGRESS_MIN_INTERVAL_S: Final = 0.5  # a new step (model call, tool) reported after this gap
PROGRESS_STREAM_INTERVAL_S: Final = 2.0  # while tokens stream: a report this often
PROGRESS_MAX_REPORTS: Final = 600  # per question; past it only the heartbeat
PROGRESS_TOOL_NAMES: Final = 8  # tool names a progress message lists (the latest)
PROGRESS_TOOL_NAME_MAX_CHARS: Final = 64  # of one tool name in a progress message
ENDPOINT_NOTES_FILE_NAME: Final = "endpoints.sqlite3"  # in the data dir: what endpoints did
ENDPOINT_NOTES_MAX: Final = 64  # (endpoint, model, fact) notes kept; the oldest forgotten first
ENDPOINT_NOTE_MAX_CHARS: Final = 512  # of an endpoint URL, model name or value kept in a note
LOCAL_CACHE_LIFETIME_S: Final = 24 * 3600.0  # nominal: a local KV cache has no TTL at all

# --- the Ray backend (live_memory/ray_backend; LIVE_MEMORY_BACKEND=ray) -------------------
BACKENDS: Final = ("local", "ray")
DEFAULT_RAY_ADDRESS: Final = ""  # empty: start a private Ray instance inside the gateway
DEFAULT_RAY_NAMESPACE: Final = "live-memory"
RAY_ACTOR_NAME_PREFIX: Final = "workspace:"  # + a digest of the canonical root
RAY_ACTOR_NAME_DIGEST_CHARS: Final = 32
RAY_CHECKOUT_RESOURCE_PREFIX: Final = "live_memory_checkout_"  # + a digest of a directory
RAY_CHECKOUT_RESOURCE_UNIT: Final = 0.001  # what one workspace actor takes of its node's resource
RAY_CHECKOUT_MAX_DEPTH: Final = 64  # ancestors of a root looked up for an advertised checkout
RAY_MAX_RESTARTS: Final = -1  # a killed workspace actor is always restarted (from its snapshot)
RAY_MAX_TASK_RETRIES: Final = 3  # Ray's own retries of an idempotent call over a restart
RAY_RETRY_BACKOFF_S: Final = (0.05, 0.1, 0.2, 0.5, 1.0)  # the gateway's re-sends over a restart
RAY_NODES_CACHE_S: Final = 5.0  # the node list (for placement) is re-read at most this often
RAY_INVENTORY_TIMEOUT_S: Final = 5.0  # /actors waits this long for each workspace actor's rows
RAY_MAX_INVENTORY_ACTORS: Final = 200  # workspace actors /actors asks (more are only counted)
RAY_INIT_NUM_CPUS: Final = 1  # a private Ray instance (empty address) claims this many CPUs
RAY_HOST_ACTIVATE_TIMEOUT_S: Final = 60.0  # a (re)started host restores in this, else serves
RAY_EDGE_REPLY_TIMEOUT_S: Final = 60.0  # a quick request may wait for its actor to (re)start
RAY_ACTOR_CONCURRENCY: Final = 64  # concurrent calls one workspace actor's event loop takes
RAY_PRIVATE_CHECKOUT_UNITS: Final = 1000.0  # a private instance advertises "/" this many times
OLLAMA_DEFAULT_NUM_CTX: Final = 4096  # what Ollama runs a model at unless num_ctx is set
# The first tree build of a workspace waits this long for its index's first pass (a small
# repository is indexed by then, so its core map is complete from the first question on).
CORE_MAP_FIRST_WAIT_S: Final = 1.0
RAY_FORK_TOOLBOXES_MAX: Final = 16  # workspaces' toolboxes one Ray worker keeps for its forks
RAY_RECENT_FORKS_MAX: Final = 16  # where a host's last forks ran, for /actors
RAY_ANSWER_LOG_DIR: Final = "ray-answers"  # under the data dir: answers by question key
RAY_ANSWER_LOG_MAX: Final = 64  # question keys (and answers) a workspace remembers
RAY_IDLE_CHECK_MIN_S: Final = 0.5  # an idle host re-checks its quiet time at most this often
RAY_PASSIVATE_GRACE_S: Final = 10.0  # an idle host's drain waits this long for late forks
