"""What a question needs from the server: settings, the model provider, prices, sizes."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, replace

from live_memory.agent.endpoint_speed import Budget, SpeedBoard, SpeedMeter, question_budget
from live_memory.agent.grounding import ForcedTool, forced_tool_support
from live_memory.agent.provider_factory import make_provider
from live_memory.agent.spend import SpendGuard
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import NoProviderConfigured
from live_memory.index import SymbolIndexes
from live_memory.knowledge import EndpointNotes, FactStore, TranscriptQueue, UsageLedger
from live_memory.prompt_cache import CachePolicy, cache_policy_for
from live_memory.providers import (
    EndpointFacts,
    Pricing,
    ProbeStatus,
    Provider,
    Usage,
    context_tokens_for,
    cost_usd,
    endpoint_kind,
    price_for,
)

__all__ = ["FORCED_TOOL_FACT", "Services", "Stores", "build_services", "with_endpoint"]

logger = logging.getLogger(__name__)

FORCED_TOOL_FACT = "forced_tool"
"""The endpoint note: "ignored" once a forced tool call came back as prose."""


@dataclass(frozen=True, slots=True)
class Stores:
    """The process's stores (SQLite in the data dir, and the endpoints' learnt speed, in
    memory); they outlive reloads."""

    usage: UsageLedger
    transcripts: TranscriptQueue
    facts: FactStore | None = None
    """The durable fact store; None keeps the ledger in the window alone (each compaction
    regenerates it from one summary, as before the store existed)."""
    symbols: SymbolIndexes | None = None
    """The structural index of every loaded workspace (None: LIVE_MEMORY_SYMBOL_INDEX off)."""
    speeds: SpeedBoard = field(default_factory=SpeedBoard)
    endpoints: EndpointNotes | None = None
    """What endpoints were seen to do (a forced tool ignored), durable across restarts."""

    def close(self) -> None:
        if self.endpoints is not None:
            self.endpoints.close()
        if self.symbols is not None:
            self.symbols.close()
        self.usage.close()
        self.transcripts.close()
        if self.facts is not None:
            self.facts.close()


@dataclass(frozen=True, slots=True)
class Services:
    """Immutable; a configuration reload builds a new one (in-flight work keeps the old)."""

    settings: Settings
    provider: Provider | None
    pricing: Pricing
    max_context_tokens: int
    spend: SpendGuard
    stores: Stores
    cache_policy: CachePolicy
    endpoint: EndpointFacts = field(default_factory=lambda: EndpointFacts("not_probed"))
    """What probing the endpoint found (`pending` until it answers; see providers.probe)."""
    context_source: str = "LIVE_MEMORY_MAX_CONTEXT_TOKENS"
    """Where `max_context_tokens` came from, in words (/health, /stats)."""

    def require_provider(self) -> Provider:
        """The configured provider. Raises NoProviderConfigured naming what to set."""
        if self.provider is None:
            raise NoProviderConfigured(
                self.settings.provider_problem or "No model provider is configured."
            )
        return self.provider

    def cost(self, usage: Usage) -> float | None:
        """USD for `usage`, or None when the credential is a subscription (not metered).

        Cache writes are priced at the TTL the policy asks for (a 1-hour write costs more)."""
        if self.settings.subscription:
            return None
        return cost_usd(usage, self.pricing, cache_ttl=self.cache_policy.ttl or "5m")

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def local(self) -> bool:
        """A model server on this machine or network (its cache and its speed are its own)."""
        return self.cache_policy.local

    @property
    def endpoint_id(self) -> str:
        """The endpoint's name in the speed board and the endpoint notes."""
        return self.settings.base_url or self.settings.provider or ""

    @property
    def speed(self) -> SpeedMeter:
        return self.stores.speeds.meter(self.endpoint_id)

    @property
    def forced_tool(self) -> ForcedTool:
        """Whether this endpoint honours a forced tool call: what a question saw (noted),
        else what its kind suggests (see grounding.forced_tool_support)."""
        notes = self.stores.endpoints
        if notes is not None and notes.get(self.endpoint_id, self.model, FORCED_TOOL_FACT):
            return "ignored"
        provider = self.provider
        if provider is None:
            return forced_tool_support(self.settings.provider or "", self.settings.base_url or "")
        return forced_tool_support(provider.name, provider.endpoint)

    def note_forced_tool_ignored(self) -> None:
        """Remember (durably) that this endpoint answered a forced tool call with prose, so
        no later question, nor the next process, forces it again. Blocking: SQLite."""
        notes = self.stores.endpoints
        if notes is not None and notes.note(
            self.endpoint_id, self.model, FORCED_TOOL_FACT, "ignored"
        ):
            logger.warning(
                "endpoint %s (model %s) ignored a forced tool call: the cold guard runs its "
                "own search there from now on",
                self.endpoint_id,
                self.model,
            )

    def budget(self, answer_tokens: int, prompt_tokens: int | None = None) -> Budget:
        """The soft budget of the next question (see endpoint_speed.question_budget)."""
        settings = self.settings
        return question_budget(
            self.speed.snapshot(),
            local=self.local,
            answer_tokens=answer_tokens,
            default_s=settings.default_timeout_s,
            explicit=settings.timeout_explicit,
            mcp_timeout_s=settings.mcp_timeout_s,
            prompt_tokens=prompt_tokens,
        )

    @property
    def tool_output_chars(self) -> int:
        """One tool result's cap, scaled with the window (a default Read of 60,000 characters
        filled half of a 32k local window)."""
        share = self.max_context_tokens * C.TOOL_OUTPUT_SHARE_OF_WINDOW * C.CHARS_PER_TOKEN
        return max(C.MIN_TOOL_OUTPUT_CHARS, min(C.TOOL_OUTPUT_MAX_CHARS, int(share)))

    @property
    def tool_budget_tokens(self) -> int:
        """All of one question's tool results, scaled with the window."""
        share = int(self.max_context_tokens * C.TOOL_BUDGET_SHARE_OF_WINDOW)
        return max(C.MIN_TOOL_BUDGET_TOKENS, min(C.QUESTION_TOOL_RESULT_TOKEN_BUDGET, share))

    def endpoint_report(self) -> dict[str, object]:
        """The endpoint block of /health and /stats: what is known, and where from."""
        facts = self.endpoint
        body: dict[str, object] = {
            "url": self.provider.endpoint if self.provider is not None else None,
            "local": self.local,
            "probe": facts.to_json(),
            "context_tokens": self.max_context_tokens,
            "context_source": self.context_source,
            "tool_output_max_chars": self.tool_output_chars,
            "question_tool_budget_tokens": self.tool_budget_tokens,
            "speed": self.speed.snapshot().to_json(),
            "forced_tool": self._forced_tool_report(),
        }
        if facts.status == "nothing_found" and self.settings.max_context_tokens is None:
            body["problem"] = (
                f"the endpoint did not say its context size (tried {', '.join(facts.tried)}); "
                f"assuming {self.max_context_tokens} tokens: set LIVE_MEMORY_MAX_CONTEXT_TOKENS "
                "to the size the server was started with"
            )
        return body

    def _forced_tool_report(self) -> dict[str, object]:
        notes = self.stores.endpoints
        seen = notes.notes_for(self.endpoint_id, self.model) if notes is not None else []
        for note in seen:
            if note.fact == FORCED_TOOL_FACT:
                return {"value": note.value, "source": "seen", "noted_at": note.noted_at}
        return {"value": self.forced_tool, "source": "endpoint kind"}

    @property
    def keep_warm_interval_s(self) -> float:
        """The configured interval, else a margin under the provider's cache lifetime."""
        return self.cache_policy.keep_warm_interval_s


def build_services(settings: Settings, stores: Stores) -> Services:
    """Everything a question needs under `settings`, over the process's durable stores."""
    provider = make_provider(settings) if settings.provider is not None else None
    pricing = price_for(
        settings.model,
        price_input=settings.price_input,
        price_output=settings.price_output,
        cache_read_mult=settings.price_cache_read_mult,
        cache_write_mult=settings.price_cache_write_mult,
    )
    known = context_tokens_for(settings.model)
    window = settings.max_context_tokens or known or C.FALLBACK_CONTEXT_TOKENS
    probe = _probe_status(settings)
    if settings.max_context_tokens is not None:
        source = "LIVE_MEMORY_MAX_CONTEXT_TOKENS"
    elif known is not None:
        source = f"the model table ({settings.model})"
    elif probe == "pending":
        source = f"assumed {window} until the endpoint probe answers"
    else:
        source = f"assumed {window}: nothing says this model's context size"
    spend = SpendGuard(stores.usage, settings)
    policy = cache_policy_for(
        settings.provider or C.PROVIDER_ANTHROPIC,
        settings.base_url,
        settings.model,
        interval_override=settings.keep_warm_interval_s,
        max_idle_s=settings.keep_warm_max_idle_s,
    )
    return Services(
        settings,
        provider,
        pricing,
        window,
        spend,
        stores,
        policy,
        endpoint=EndpointFacts(probe),
        context_source=source,
    )


def _probe_status(settings: Settings) -> ProbeStatus:
    """`pending` for an OpenAI-compatible server (llama.cpp, vLLM, Ollama, LM Studio, a
    gateway): worth asking once; the big APIs' context sizes are in the model table."""
    if settings.provider != C.PROVIDER_OPENAI:
        return "not_probed"
    kind = endpoint_kind(settings.provider, settings.base_url, settings.model)
    return "pending" if kind == "openai_compatible" else "not_probed"


def with_endpoint(services: Services, facts: EndpointFacts) -> Services:
    """`services` with what the probe found: its context size unless the user set one."""
    settings = services.settings
    found = facts.context_tokens
    if found is not None:
        logger.info(
            "endpoint %s: %s, context %d tokens (%s)",
            settings.base_url,
            facts.server,
            found,
            facts.source,
        )
    else:
        logger.warning(
            "endpoint %s did not say its context size (tried %s); assuming %d tokens: set "
            "LIVE_MEMORY_MAX_CONTEXT_TOKENS",
            settings.base_url,
            ", ".join(facts.tried),
            services.max_context_tokens,
        )
    if settings.max_context_tokens is not None:
        if found is not None and found < settings.max_context_tokens:
            logger.warning(
                "LIVE_MEMORY_MAX_CONTEXT_TOKENS=%d is larger than the server's context (%d): "
                "prompts past %d will be refused",
                settings.max_context_tokens,
                found,
                found,
            )
        return replace(services, endpoint=facts)
    if found is None:
        source = f"assumed {services.max_context_tokens}: the endpoint did not say its size"
        return replace(services, endpoint=facts, context_source=source)
    source = f"{facts.server} {facts.source}"
    return replace(services, endpoint=facts, max_context_tokens=found, context_source=source)
