"""Reading recorded provider requests the way the byte-prefix tests compare them."""

from __future__ import annotations

from typing import Any

__all__ = ["without_cache_control"]


def without_cache_control(value: Any) -> Any:
    """The request without cache_control markers (they move as the history grows)."""
    if isinstance(value, dict):
        return {k: without_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [without_cache_control(v) for v in value]
    return value
