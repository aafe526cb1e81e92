"""The fake provider's simulated prefix cache, which makes its usage numbers meaningful.

Tokens are bytes of canonical JSON divided by `chars_per_token`.
- Anthropic: each `cache_control` marker writes an entry for the prompt prefix ending at its
  block. A later request reads the longest entry that is a byte prefix of its own prompt; the
  part between that and its last marker is written; the rest is plain input.
- OpenAI-style: a request with a `prompt_cache_key` reads the longest common prefix with an
  earlier prompt under the same key, rounded down to `step` tokens (OpenAI: 128). Without a key
  nothing is cached, unless `keyless` (DeepSeek caches every prompt, in 64-token units).
Not thread-safe: the fake provider serialises access.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AnthropicCacheUsage", "PrefixCache", "common_prefix_len"]

_MAX_ENTRIES = 512  # per model/key; the oldest are forgotten, like an evicting cache


@dataclass(frozen=True, slots=True)
class AnthropicCacheUsage:
    input_tokens: int
    """Tokens neither read from nor written to the cache."""
    cache_read_input_tokens: int
    cache_creation_input_tokens: int

    @property
    def prompt_tokens(self) -> int:
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens


class PrefixCache:
    """Cache entries per model (and per prompt cache key on the OpenAI side)."""

    def __init__(self, chars_per_token: float) -> None:
        self._chars_per_token = chars_per_token
        self._entries: dict[tuple[str, ...], list[bytes]] = {}

    def tokens(self, size_bytes: int) -> int:
        return int(size_bytes / self._chars_per_token)

    def clear(self) -> None:
        self._entries.clear()

    def anthropic(self, model: str, prompt: bytes, marker_ends: list[int]) -> AnthropicCacheUsage:
        """Account one Messages request; `marker_ends` are byte offsets just after each
        block that carries a cache_control marker."""
        entries = self._entries.setdefault(("anthropic", model), [])
        read = max((len(e) for e in entries if prompt.startswith(e)), default=0)
        last_marker = max(marker_ends, default=0)
        written = max(0, last_marker - read)
        for end in marker_ends:
            _remember(entries, prompt[:end])
        read_tokens = self.tokens(read)
        write_tokens = self.tokens(read + written) - read_tokens
        total = self.tokens(len(prompt))
        return AnthropicCacheUsage(
            input_tokens=max(0, total - read_tokens - write_tokens),
            cache_read_input_tokens=read_tokens,
            cache_creation_input_tokens=write_tokens,
        )

    def openai(self, model: str, key: str | None, prompt: bytes, step: int, keyless: bool) -> int:
        """Account one chat-completions request; returns its cached prompt tokens."""
        if key is None and not keyless:
            return 0
        entries = self._entries.setdefault(("openai", model, key or ""), [])
        common = max((common_prefix_len(e, prompt) for e in entries), default=0)
        _remember(entries, prompt)
        tokens = self.tokens(common)
        return tokens - tokens % step if step > 0 else tokens


def _remember(entries: list[bytes], prefix: bytes) -> None:
    if prefix and prefix not in entries:
        entries.append(prefix)
        del entries[:-_MAX_ENTRIES]


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the longest common byte prefix of `a` and `b`."""
    # Binary search over slice comparisons: C-speed even for long prompts.
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low
