"""Prompt-cache policy: which TTL to ask for, when a keep-warm ping is due.

Fed plain numbers (prompt sizes, seconds, the model's minimum cacheable size); the provider
package knows the endpoints and prices, this one only decides.
"""

from __future__ import annotations

from live_memory.prompt_cache.policy import (
    CacheDecision,
    CachePolicy,
    cache_policy_for,
    decide,
    ping_due,
)

__all__ = ["CacheDecision", "CachePolicy", "cache_policy_for", "decide", "ping_due"]
