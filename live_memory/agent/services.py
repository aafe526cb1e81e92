"""What a question needs from the server: settings, the model provider, prices, sizes."""

from __future__ import annotations

from dataclasses import dataclass

from live_memory.agent.spend import SpendGuard
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import NoProviderConfigured
from live_memory.knowledge import TranscriptQueue, UsageLedger
from live_memory.providers import (
    Pricing,
    Provider,
    context_tokens_for,
    cost_usd,
    make_provider,
    price_for,
)
from live_memory.providers.keep_warm_policy import keep_warm_interval_for
from live_memory.providers.types import Usage

__all__ = ["Services", "Stores", "build_services"]


@dataclass(frozen=True, slots=True)
class Stores:
    """The process's durable stores (SQLite in the data dir); they outlive reloads."""

    usage: UsageLedger
    transcripts: TranscriptQueue

    def close(self) -> None:
        self.usage.close()
        self.transcripts.close()


@dataclass(frozen=True, slots=True)
class Services:
    """Immutable; a configuration reload builds a new one (in-flight work keeps the old)."""

    settings: Settings
    provider: Provider | None
    pricing: Pricing
    max_context_tokens: int
    spend: SpendGuard
    stores: Stores

    def require_provider(self) -> Provider:
        """The configured provider. Raises NoProviderConfigured naming what to set."""
        if self.provider is None:
            raise NoProviderConfigured(
                self.settings.provider_problem or "No model provider is configured."
            )
        return self.provider

    def cost(self, usage: Usage) -> float | None:
        """USD for `usage`, or None when the credential is a subscription (not metered)."""
        return None if self.settings.subscription else cost_usd(usage, self.pricing)

    @property
    def model(self) -> str:
        return self.settings.model

    @property
    def keep_warm_interval_s(self) -> float:
        """The configured interval, else the provider's cache-TTL-aware default."""
        settings = self.settings
        return keep_warm_interval_for(
            settings.provider or C.PROVIDER_ANTHROPIC,
            settings.base_url,
            settings.model,
            settings.keep_warm_interval_s,
        )


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
    return Services(settings, provider, pricing, window, spend, stores)
