"""Joining (or starting) the Ray cluster a gateway routes to."""

from __future__ import annotations

import logging

import ray

from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import ConfigError
from live_memory.ray_backend.placement import checkout_resource

__all__ = ["connect", "disconnect"]

logger = logging.getLogger(__name__)


def connect(settings: Settings) -> None:
    """Connect this process to the cluster of LIVE_MEMORY_RAY_ADDRESS (`auto`, a head
    address) or, when it is empty, start a private single-node Ray inside this process
    (its workspace actors then end with it). Raises ConfigError when the cluster cannot be
    reached."""
    if ray.is_initialized():
        return
    address = settings.ray_address or None
    try:
        if address is None:
            ray.init(
                namespace=settings.ray_namespace,
                include_dashboard=False,
                num_cpus=C.RAY_INIT_NUM_CPUS,
                log_to_driver=False,
                # The private node holds every checkout this machine can read.
                resources={checkout_resource("/"): C.RAY_PRIVATE_CHECKOUT_UNITS},
            )
        else:
            ray.init(
                address=address,
                namespace=settings.ray_namespace,
                include_dashboard=False,
                log_to_driver=False,
            )
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise ConfigError(
            f"LIVE_MEMORY_RAY_ADDRESS={settings.ray_address or '(empty)'}: cannot join the Ray "
            f"cluster: {exc}"
        ) from exc
    logger.info("joined Ray cluster (namespace %s)", settings.ray_namespace)


def disconnect() -> None:
    """Leave the cluster (a private instance ends, with its workspace actors)."""
    if ray.is_initialized():
        ray.shutdown()
