"""The bearer token of a Claude subscription, read from Claude Code's credential file.

Claude Code refreshes `claudeAiOauth.accessToken` in that file; reading it again whenever the
file changes picks the refreshed token up. Refreshing a token ourselves is not done here.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

import orjson

from live_memory.config import constants
from live_memory.errors import ProviderAuthError

__all__ = ["CredentialFileToken"]

logger = logging.getLogger(__name__)


class CredentialFileToken:
    """A callable returning the current access token; re-reads the file when it changes."""

    def __init__(self, path: Path) -> None:
        self._path = path
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._token = ""

    def __call__(self) -> str:
        """The token. Raises ProviderAuthError when the file is gone or holds none."""
        with self._lock:
            try:
                stat = self._path.stat()
                stamp = (stat.st_mtime_ns, stat.st_size)
                if stamp != self._stamp:
                    self._token = self._read()
                    self._stamp = stamp
            except (OSError, ValueError) as exc:
                raise ProviderAuthError(
                    f"cannot read the Claude subscription credential {self._path}: {exc}"
                ) from exc
            return self._token

    def _read(self) -> str:
        with self._path.open("rb") as handle:
            document = orjson.loads(handle.read(constants.CREDENTIALS_MAX_BYTES))
        oauth = document.get("claudeAiOauth") if isinstance(document, dict) else None
        token = oauth.get("accessToken") if isinstance(oauth, dict) else None
        if not isinstance(token, str) or not token.strip():
            raise ValueError("it holds no claudeAiOauth.accessToken")
        logger.info("loaded the Claude subscription token from %s", self._path)
        return token.strip()
