"""The Claude subscription OAuth credential, as Claude Code stores it.

    {"claudeAiOauth": {"accessToken": "...", "refreshToken": "...", "expiresAt": <ms>, ...}}

Claude Code keeps it in `~/.claude/.credentials.json` (or `$CLAUDE_CONFIG_DIR`); the server keeps
the tokens it refreshed itself in `<data_dir>/oauth.json`, in the same shape so one reader serves
both. This module only reads and writes such files; refreshing lives in `oauth`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import orjson

from live_memory.atomic_file import write_atomically
from live_memory.config import constants
from live_memory.regular_file import read_regular

__all__ = ["OAuthCredential", "read_credential", "write_credential"]

logger = logging.getLogger(__name__)

_SECTION = "claudeAiOauth"


@dataclass(frozen=True, slots=True)
class OAuthCredential:
    """One access token with what is needed to renew it."""

    access_token: str
    refresh_token: str | None = None
    expires_at_ms: int | None = None
    """Epoch milliseconds; None when the file does not say (then it is never refreshed early)."""
    scopes: tuple[str, ...] = ()

    def seconds_left(self, now: float) -> float | None:
        """Seconds until expiry at epoch time `now`, or None when the expiry is unknown."""
        if self.expires_at_ms is None:
            return None
        return self.expires_at_ms / 1000.0 - now

    def expires_later_than(self, other: OAuthCredential) -> bool:
        """Whether this credential outlives `other` (an unknown expiry counts as the oldest)."""
        mine = -1 if self.expires_at_ms is None else self.expires_at_ms
        theirs = -1 if other.expires_at_ms is None else other.expires_at_ms
        return mine > theirs


def read_credential(path: Path) -> OAuthCredential:
    """The credential in `path`.

    Raises OSError when the file cannot be read, ValueError when it holds no access token.
    """
    document = orjson.loads(read_regular(path, constants.CREDENTIALS_MAX_BYTES))
    section = document.get(_SECTION) if isinstance(document, dict) else None
    if not isinstance(section, dict):
        raise ValueError(f"it holds no {_SECTION} section")
    token = section.get("accessToken")
    if not isinstance(token, str) or not token.strip():
        raise ValueError(f"it holds no {_SECTION}.accessToken")
    refresh = section.get("refreshToken")
    expires = section.get("expiresAt")
    scopes = section.get("scopes")
    return OAuthCredential(
        access_token=token.strip(),
        refresh_token=refresh.strip() if isinstance(refresh, str) and refresh.strip() else None,
        expires_at_ms=int(expires) if isinstance(expires, int | float) and expires > 0 else None,
        scopes=tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else (),
    )


def write_credential(path: Path, credential: OAuthCredential) -> None:
    """Write `credential` to `path` atomically, readable by the owner only (mode 0600).

    Raises OSError when the directory or file cannot be written.
    """
    section: dict[str, object] = {"accessToken": credential.access_token}
    if credential.refresh_token is not None:
        section["refreshToken"] = credential.refresh_token
    if credential.expires_at_ms is not None:
        section["expiresAt"] = credential.expires_at_ms
    if credential.scopes:
        section["scopes"] = list(credential.scopes)
    data = orjson.dumps({_SECTION: section}, option=orjson.OPT_INDENT_2)
    write_atomically(path, data)  # owner-only: the token is never readable by others
    logger.debug("wrote the refreshed subscription credential to %s", path)
