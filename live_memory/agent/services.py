"""What a question needs from the server: settings, the model provider, prices, sizes."""

from __future__ import annotations

from dataclasses import dataclass

from live_memory.agent.provider_factory import make_provider
from live_memory.agent.spend import SpendGuard
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import NoProviderConfigured
from live_memory.knowledge import FactStore, TranscriptQueue, UsageLedger
from live_memory.prompt_cache import CachePolicy, cache_policy_for
from live_memory.providers import Pricing, Provider, Usage, context_tokens_for, cost_usd, price_for

__all__ = ["Services", "Stores", "build_services"]


@dataclass(frozen=True, slots=True)
class Stores:
    """The process's durable stores (SQLite in the data dir); they outlive reloads."""

    usage: UsageLedger
    transcripts: TranscriptQueue
    facts: FactStore | None = None
    """The durable fact store; None keeps the ledger in the window alone (each compaction
    regenerates it from one summary, as before the store existed)."""

    def close(self) -> None:
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
    window = (
        settings.max_context_tokens
        or context_tokens_for(settings.model)
        or C.FALLBACK_CONTEXT_TOKENS
    )
    spend = SpendGuard(stores.usage, settings)
    policy = cache_policy_for(
        settings.provider or C.PROVIDER_ANTHROPIC,
        settings.base_url,
        settings.model,
        interval_override=settings.keep_warm_interval_s,
        max_idle_s=settings.keep_warm_max_idle_s,
    )
    return Services(settings, provider, pricing, window, spend, stores, policy)
