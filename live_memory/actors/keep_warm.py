"""KeepWarmActor: a periodic tick that asks idle workspaces to ping their cached prefix.

The eligibility rule and the ping itself live with the workspace (it owns the window); this
actor only keeps time, so the provider's prompt cache does not expire between questions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from live_memory.actors.message import KeepWarmTick
from live_memory.actors.runtime import Actor, ActorRef, ActorSystem
from live_memory.agent import Services
from live_memory.config import constants as C

__all__ = ["KeepWarmActor", "KeepWarmConfig", "keep_warm_config", "tick_period"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class KeepWarmConfig:
    """Sent at start and on every configuration reload."""

    enabled: bool
    interval_s: float
    max_idle_s: float


def keep_warm_config(services: Services) -> KeepWarmConfig:
    """The keep-warm settings of `services` (pings need a provider)."""
    settings = services.settings
    return KeepWarmConfig(
        # Never for a local server, whatever LIVE_MEMORY_KEEP_WARM says (see cache_policy_for).
        enabled=settings.keep_warm
        and services.provider is not None
        and not services.cache_policy.local,
        interval_s=services.keep_warm_interval_s,
        max_idle_s=settings.keep_warm_max_idle_s,
    )


@dataclass(frozen=True, slots=True)
class _Tick:
    pass


def tick_period(interval_s: float) -> float:
    """Tick often enough that a ping is never much later than its interval."""
    return max(min(C.KEEP_WARM_TICK_S, interval_s / 4), C.KEEP_WARM_MIN_TICK_S)


class KeepWarmActor(Actor):
    kind = "keep_warm"

    def __init__(
        self, system: ActorSystem, *, gateway: ActorRef[Any], config: KeepWarmConfig
    ) -> None:
        super().__init__(system, "keep-warm")
        self.gateway = gateway
        self.config = config

    def started(self) -> None:
        self.system.every(tick_period(self.config.interval_s), self.actor_ref, _Tick)

    def handle(self, message: Any) -> None:
        match message:
            case _Tick():
                if self.config.enabled:
                    self.gateway.tell(KeepWarmTick(self.config.interval_s, self.config.max_idle_s))
            case KeepWarmConfig():
                self.config = message
                logger.info(
                    "keep-warm %s (interval %.0f s)",
                    "on" if message.enabled else "off",
                    message.interval_s,
                )
            case _:
                super().handle(message)
