"""Settings that are only valid together: a bind beyond loopback needs a token.

One check, run where a configuration is about to be used (`serve`) and where one is about to be
written (`config set`), so a bad combination is refused before the file changes instead of at
the next start.
"""

from __future__ import annotations

import ipaddress

from live_memory.config import constants as C
from live_memory.config.settings import Settings
from live_memory.errors import ConfigError

__all__ = ["check_exposure", "is_loopback"]


def is_loopback(host: str) -> bool:
    """True for the loopback names and any 127.0.0.0/8 or ::1 address."""
    if host in C.LOOPBACK_HOSTS:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(settings: Settings) -> None:
    """Raise ConfigError when `settings` would bind beyond loopback without a token."""
    if not is_loopback(settings.host) and not settings.token:
        raise ConfigError(
            f"refusing to bind {settings.host}: a non-loopback address needs LIVE_MEMORY_TOKEN "
            "(every route but /health then requires `Authorization: Bearer <token>`)"
        )
