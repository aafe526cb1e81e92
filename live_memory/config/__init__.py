"""Configuration: the frozen settings object, its loader, workspace keying and logging."""

from __future__ import annotations

from live_memory.config import constants
from live_memory.config.canonical import canonical_workspace
from live_memory.config.loader import config_items, load_settings, write_config
from live_memory.config.logging_setup import configure_logging, reset_logging
from live_memory.config.provider_detection import NO_PROVIDER_PROBLEM
from live_memory.config.settings import Concurrency, RepoRootMode, Settings, WatcherMode
from live_memory.config.variables import env_name

__all__ = [
    "NO_PROVIDER_PROBLEM",
    "Concurrency",
    "RepoRootMode",
    "Settings",
    "WatcherMode",
    "canonical_workspace",
    "config_items",
    "configure_logging",
    "constants",
    "env_name",
    "load_settings",
    "reset_logging",
    "write_config",
]
