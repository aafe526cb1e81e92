"""Keeping secrets and binary noise away from the model: secret paths, secret text, binary files."""

from __future__ import annotations

from live_memory.hygiene.binary import looks_binary
from live_memory.hygiene.secret import (
    PUTTY_PRIVATE,
    SECRET_HINT,
    might_hold_secret,
    redact_lines,
    redact_secrets,
)
from live_memory.hygiene.secret_paths import is_secret_path

__all__ = [
    "PUTTY_PRIVATE",
    "SECRET_HINT",
    "is_secret_path",
    "looks_binary",
    "might_hold_secret",
    "redact_lines",
    "redact_secrets",
]
