"""Configuration: the frozen settings object, its loader, workspace keying and logging."""

from __future__ import annotations

from live_memory.config import constants
from live_memory.config.canonical import ResolvedRoots, canonical_workspace
from live_memory.config.exposure import check_exposure, is_loopback
from live_memory.config.loader import config_file_values, config_items, load_settings, write_config
from live_memory.config.logging_setup import configure_logging, reset_logging
from live_memory.config.provider_detection import NO_PROVIDER_PROBLEM
from live_memory.config.report import RESTART_KEYS, config_report
from live_memory.config.service_env import service_env_file, service_environment, session_mismatch
from live_memory.config.settings import (
    CloudPlatform,
    Concurrency,
    RepoRootMode,
    Settings,
    WatcherMode,
)
from live_memory.config.start_check import check_startable
from live_memory.config.variables import VARIABLES, env_name

__all__ = [
    "NO_PROVIDER_PROBLEM",
    "RESTART_KEYS",
    "VARIABLES",
    "CloudPlatform",
    "Concurrency",
    "RepoRootMode",
    "ResolvedRoots",
    "Settings",
    "WatcherMode",
    "canonical_workspace",
    "check_exposure",
    "check_startable",
    "config_file_values",
    "config_items",
    "config_report",
    "configure_logging",
    "constants",
    "env_name",
    "is_loopback",
    "load_settings",
    "reset_logging",
    "service_env_file",
    "service_environment",
    "session_mismatch",
    "write_config",
]
