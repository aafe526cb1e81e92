"""The one frozen settings object (environment > config.json > defaults).

Loading and validation live in `live_memory.config.loader`; this module only declares the shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from live_memory.config import constants as C

__all__ = ["Backend", "CloudPlatform", "Concurrency", "RepoRootMode", "Settings", "WatcherMode"]

Concurrency = Literal["parallel", "serial"]
RepoRootMode = Literal["nearest", "outermost"]
WatcherMode = Literal["off", "os"]
Backend = Literal["local", "ray"]


@dataclass(frozen=True, slots=True)
class CloudPlatform:
    """Claude on a cloud platform, chosen as Claude Code chooses it (CLAUDE_CODE_USE_BEDROCK,
    CLAUDE_CODE_USE_VERTEX); the endpoint is `Settings.base_url`."""

    name: Literal["bedrock", "vertex"]
    region: str
    """AWS_REGION (Bedrock) or CLOUD_ML_REGION (Vertex)."""
    project_id: str | None = None
    """Vertex: ANTHROPIC_VERTEX_PROJECT_ID."""
    aws_profile: str | None = None
    """Bedrock: AWS_PROFILE; without it boto3's chain (AWS_ACCESS_KEY_ID, SSO, a role)."""


@dataclass(frozen=True, slots=True)
class Settings:
    """Every LIVE_MEMORY_* variable, parsed and validated. Field = variable name, lower case."""

    host: str = C.DEFAULT_HOST
    port: int = C.DEFAULT_PORT
    allowed_hosts: tuple[str, ...] = ()
    """Host names besides loopback (and `host`) that requests may be addressed to: a container's
    service name (`live-memory`) or the machine's name behind a mapped port."""
    data_dir: Path = field(default_factory=lambda: Path(C.DEFAULT_DATA_DIR).expanduser())
    token: str | None = None
    provider: str | None = None
    """`anthropic`, `openai`, or None when nothing is configured (see `provider_problem`)."""
    base_url: str | None = None
    api_key: str | None = None
    openai_extra_body: dict[str, object] | None = None
    """A JSON object merged into every OpenAI-compatible request (answers, summaries,
    keep-warm pings): the extra fields a gateway such as OpenRouter takes."""
    model: str = ""
    summary_model: str = ""
    max_context_tokens: int | None = None
    compaction_threshold: float = C.DEFAULT_COMPACTION_THRESHOLD
    compaction_floor: float = C.DEFAULT_COMPACTION_FLOOR
    default_timeout_s: float = C.DEFAULT_TIMEOUT_S
    mcp_timeout_s: float = C.DEFAULT_MCP_TIMEOUT_S
    """The MCP client's tool-call timeout (the plugin's is 120 s): no soft budget learnt from
    a slow local model's speed grows past it (less the hard backstop's margin)."""
    timeout_explicit: bool = False
    """True when the user set LIVE_MEMORY_DEFAULT_TIMEOUT_S: then it is the budget, as set."""
    max_answer_tokens: int = C.DEFAULT_MAX_ANSWER_TOKENS
    concurrency: Concurrency = C.DEFAULT_CONCURRENCY
    max_parallel_queries: int = C.DEFAULT_MAX_PARALLEL_QUERIES
    async_tools: bool = False
    keep_warm: bool = False
    keep_warm_interval_s: float | None = None
    """None = provider-aware default."""
    keep_warm_max_idle_s: float = C.DEFAULT_KEEP_WARM_MAX_IDLE_S
    preload_globs: tuple[str, ...] = ()
    file_globs: tuple[str, ...] = ()
    include_vendored: bool = False
    """List vendored and generated directories (`node_modules`, `.venv`, `dist`…, see
    `live_memory.vendored`) in the tree, the tools, the index and the watcher (restart)."""
    passive_ingestion: bool = True
    force_explore_when_cold: bool = True
    """The cold guard: a first answer given before anything grounds it is checked against
    the workspace (a forced tool call, or our own search) before it is trusted."""
    symbol_index: bool = True
    """Parse the workspace's source files into the structural index (restart to change)."""
    max_held_bytes: int = C.MAX_HELD_BYTES
    """Observed file content one workspace holds (also capped at a share of the floor)."""
    watcher: WatcherMode = "off"
    watch_max_per_root: int = C.WATCH_MAX_PER_ROOT
    """inotify watches one root may use; a root needing more is polled (its window's files)."""
    watch_max_total: int = C.WATCH_MAX_TOTAL
    """inotify watches all roots together may use (also capped at a share of the user's limit)."""
    canonicalize_workspace: bool = True
    repo_root_mode: RepoRootMode = "nearest"
    allowed_roots: tuple[str, ...] = ()
    """Resolved directories served although they are `/`, a home directory or above one."""
    home_dir: Path | None = None
    """The server user's home ($HOME, resolved): a workspace root at or above it is refused."""
    log_level: str = C.DEFAULT_LOG_LEVEL
    log_file: Path | None = None
    price_input: float | None = None
    price_output: float | None = None
    price_cache_read_mult: float = C.DEFAULT_CACHE_READ_MULT
    price_cache_write_mult: float = C.DEFAULT_CACHE_WRITE_MULT
    daily_budget_usd: float | None = None
    workspace_daily_budget_usd: float | None = None
    use_subscription: bool = True
    oauth_token_url: str | None = None
    insights_root: Path | None = None
    max_body_bytes: int = C.MAX_BODY_BYTES
    max_notify_events: int = C.MAX_NOTIFY_EVENTS
    max_question_chars: int = C.MAX_QUESTION_CHARS
    max_import_facts: int = C.MAX_IMPORT_FACTS
    max_ledger_facts: int = C.MAX_LEDGER_FACTS
    """Facts a workspace ledger holds; learning (imports, transcripts) adds none past it."""
    max_stored_facts: int = C.MAX_STORED_FACTS
    """Facts one workspace's durable store keeps; past it garbage collection removes the
    superseded, then the demoted, then the least used."""
    fact_retire_after_s: float = C.FACT_RETIRE_AFTER_S
    """Superseded or demoted facts older than this are collected even under the cap."""
    resident_facts_share: float = C.RESIDENT_FACTS_SHARE
    """Share of the window the frozen block's resident facts (the most used) may take."""
    max_pending_questions: int = C.MAX_PENDING_QUESTIONS
    request_timeout_s: float = C.REQUEST_BODY_TIMEOUT_S
    """A client must send its whole request, head and body, within this many seconds of its
    first byte (slow clients get 408)."""
    max_connections: int = C.MAX_CONNECTIONS
    """Open connections before a newcomer sheds an idle one, an idle event stream or a body
    still arriving (gateway/http_limits)."""
    passivate_after_s: float = C.PASSIVATE_AFTER_IDLE_S
    """Idle seconds before a workspace actor is passivated (snapshot flushed, thread ended)."""
    workspaces_active_max: int = C.WORKSPACES_ACTIVE_MAX
    """Workspaces active at once; past it the least recently used idle ones are passivated
    early (never a busy one: with all busy, more are admitted, and logged)."""
    dashboard_stuck_actor_s: float | None = None
    """The dashboard highlights an actor busy on one message this long (None: 30 s, and a
    fork on its question once it outlasts what an MCP client waits, `mcp_timeout_s`)."""
    secret_path_patterns: tuple[str, ...] = C.DEFAULT_SECRET_PATH_PATTERNS
    subscription: bool = False
    """True when the provider credential is a Claude subscription token (cost not metered)."""
    credentials_file: Path | None = None
    """With `subscription`: the Claude Code OAuth credential file that was found."""
    api_key_source: str | None = None
    """Where `api_key` came from (`ANTHROPIC_AUTH_TOKEN` = send it as a bearer token)."""
    cloud: CloudPlatform | None = None
    """Anthropic's models through Bedrock or Vertex instead of Anthropic's API."""
    provider_problem: str | None = None
    """When `provider` is None: what the user must set, e.g. 'set LIVE_MEMORY_API_KEY ...'."""
    config_file: Path | None = None
    backend: Backend = "local"
    """`local`: pykka actors in this process; `ray`: workspace actors on a Ray cluster."""
    ray_address: str = C.DEFAULT_RAY_ADDRESS
    """`auto`, a head address (`host:port`, `ray://host:port`), or empty: a private instance."""
    ray_namespace: str = C.DEFAULT_RAY_NAMESPACE

    @property
    def stuck_after_s(self) -> float:
        """When the dashboard calls an actor busy on one message stuck."""
        explicit = self.dashboard_stuck_actor_s
        return C.DEFAULT_DASHBOARD_STUCK_ACTOR_S if explicit is None else explicit

    @property
    def fork_stuck_after_s(self) -> float:
        """When the dashboard calls a question stuck: past the longest any client waits for
        it (a question within its budget is busy, not stuck)."""
        explicit = self.dashboard_stuck_actor_s
        return max(self.mcp_timeout_s, self.default_timeout_s) if explicit is None else explicit

    @property
    def effective_summary_model(self) -> str:
        return self.summary_model or self.model

    @property
    def snapshot_dir(self) -> Path:
        return self.data_dir / C.SNAPSHOT_DIR_NAME
