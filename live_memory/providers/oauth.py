"""The Claude subscription token, refreshed before it expires.

Two files may hold a credential: Claude Code's own (`~/.claude/.credentials.json`, which Claude
Code rewrites whenever it refreshes) and the server's (`<data_dir>/oauth.json`, written when the
server refreshed). Every call uses whichever expires later, so a token Claude Code refreshed is
adopted at once and the server refreshes only when nobody else did. Claude Code's file is only
ever read: a refreshed token goes to the server's file, mode 0600.

A refresh is `POST {token_url}` with `{"grant_type": "refresh_token", "refresh_token": ...,
"client_id": <Claude Code's public client id>}`; the answer's `access_token`, `refresh_token`
(kept when absent) and `expires_in` become the new credential. One refresh runs at a time: a
lock per source serialises threads, and a lock file beside `oauth.json` serialises sources and
processes sharing the data dir; whoever waited re-reads the files before refreshing again.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2

from live_memory.config import constants
from live_memory.errors import ProviderAuthError
from live_memory.providers.retry import redact
from live_memory.providers.subscription import OAuthCredential, read_credential, write_credential

__all__ = ["OAuthTokenSource"]

logger = logging.getLogger(__name__)

_LOCK_POLL_S = 0.05
_DESCRIBE_WAIT_S = 0.1  # /stats must not wait out a refresh
_RELOGIN = "open Claude Code and log in again (/login), or set LIVE_MEMORY_API_KEY"


class OAuthTokenSource:
    """The current subscription access token for `AnthropicProvider` (a `BearerTokenSource`).

    `clock` returns epoch seconds (the files store epoch milliseconds).
    """

    def __init__(
        self,
        claude_file: Path,
        store: Path,
        *,
        token_url: str = constants.CLAUDE_OAUTH_TOKEN_URL,
        client_id: str = constants.CLAUDE_OAUTH_CLIENT_ID,
        margin_s: float = constants.OAUTH_REFRESH_MARGIN_S,
        timeout_s: float = constants.OAUTH_REFRESH_TIMEOUT_S,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._claude = _WatchedFile(claude_file)
        self._store = _WatchedFile(store)
        self._lock_path = store.with_name(store.name + ".lock")
        self._token_url = token_url
        self._client_id = client_id
        self._margin_s = margin_s
        self._timeout_s = timeout_s
        self._clock = clock
        self._lock = threading.Lock()
        self._refreshed: OAuthCredential | None = None  # kept in memory if the store is unwritable
        self._refused: str | None = None  # an access token the provider answered 401 to
        self._failed_at: float | None = None
        self._last_error: str | None = None
        self._refreshed_at: float | None = None
        self._source = ""

    def __call__(self) -> str:
        """The access token to send now; refreshes it first when it is about to expire.

        May block for up to the refresh timeout. Raises ProviderAuthError when no usable token
        is left (no credential file, or expired and the refresh failed).
        """
        with self._lock:
            credential = self._best()
            if self._needs_refresh(credential):
                credential = self._refresh(credential)
            return credential.access_token

    async def token(self) -> str:
        """`self()` off the event loop (file reads and a refresh block)."""
        return await asyncio.to_thread(self)

    def invalidate(self, token: str) -> None:
        """The provider refused `token` (401): use another one, refreshing if need be."""
        with self._lock:
            self._refused = token
            self._failed_at = None

    def describe(self) -> dict[str, object]:
        """Where the current token came from and when it expires, for /stats (no secrets)."""
        found: dict[str, object] = {
            "source": "refreshing",
            "expires_in_s": None,
            "refreshed_at": self._refreshed_at,
            "last_error": self._last_error,
        }
        if not self._lock.acquire(timeout=_DESCRIBE_WAIT_S):
            return found
        try:
            credential = self._best()
        except ProviderAuthError as exc:
            return {**found, "source": None, "last_error": str(exc)}
        finally:
            self._lock.release()
        left = credential.seconds_left(self._clock())
        expires = None if left is None else max(0, round(left))
        return {**found, "source": self._source, "expires_in_s": expires}

    # --- choosing ----------------------------------------------------------------------------

    def _best(self) -> OAuthCredential:
        found = [
            (name, credential)
            for name, credential in (
                ("claude_code", self._claude.credential()),
                ("data_dir", self._store.credential()),
                ("refreshed", self._refreshed),
            )
            if credential is not None
        ]
        if not found:
            raise ProviderAuthError(
                f"cannot read the Claude subscription credential {self._claude.path}: "
                f"{self._claude.problem or 'it is missing'}; {_RELOGIN}"
            )
        usable = [pair for pair in found if pair[1].access_token != self._refused] or found
        name, best = usable[0]
        for other_name, other in usable[1:]:
            if other.expires_later_than(best):
                name, best = other_name, other
        if best.access_token == self._refused and best.refresh_token is not None:
            # Every token we know was refused: make the next check refresh.
            best = OAuthCredential(best.access_token, best.refresh_token, 0, best.scopes)
        self._source = name
        return best

    def _needs_refresh(self, credential: OAuthCredential) -> bool:
        left = credential.seconds_left(self._clock())
        return left is not None and left <= self._margin_s

    # --- refreshing --------------------------------------------------------------------------

    def _refresh(self, credential: OAuthCredential) -> OAuthCredential:
        now = self._clock()
        left = credential.seconds_left(now) or 0.0
        if credential.refresh_token is None:
            return self._keep_or_fail(credential, "the credential has no refresh token")
        if self._failed_at is not None and now - self._failed_at < constants.OAUTH_REFRESH_RETRY_S:
            return self._keep_or_fail(credential, self._last_error or "the last refresh failed")
        with self._file_lock():
            # Another source or process may have refreshed while we waited for the lock.
            credential = self._best()
            if not self._needs_refresh(credential) or credential.refresh_token is None:
                return credential
            try:
                fresh = self._exchange(credential.refresh_token, credential.scopes)
            except _RefreshFailed as exc:
                self._failed_at = self._clock()
                self._last_error = str(exc)
                logger.warning("refreshing the Claude subscription token failed: %s", exc)
                return self._keep_or_fail(credential, str(exc))
            self._refreshed = fresh
            self._refreshed_at = self._clock()
            self._failed_at = self._last_error = None
            self._refused = None
            self._source = "refreshed"
            try:
                write_credential(self._store.path, fresh)
            except OSError as exc:
                logger.warning(
                    "the refreshed subscription token is kept in memory only; cannot write %s: %s",
                    self._store.path,
                    exc,
                )
        logger.info(
            "refreshed the Claude subscription token (%.0f s were left; now %s)",
            left,
            _expiry_text(fresh, self._clock()),
        )
        return fresh

    def _keep_or_fail(self, credential: OAuthCredential, why: str) -> OAuthCredential:
        left = credential.seconds_left(self._clock())
        if credential.access_token != self._refused and (left is None or left > 0):
            return credential
        raise ProviderAuthError(
            f"the Claude subscription token has expired or was refused and cannot be "
            f"refreshed ({why}); {_RELOGIN}"
        )

    def _exchange(self, refresh_token: str, scopes: tuple[str, ...]) -> OAuthCredential:
        body = {
            "grant_type": "refresh_token",
            "refresh_token": refresh_token,
            "client_id": self._client_id,
        }
        try:
            response = httpx2.post(
                self._token_url,
                json=body,
                headers={"Accept": "application/json"},
                timeout=self._timeout_s,
            )
        except httpx2.HTTPError as exc:
            raise _RefreshFailed(f"{self._token_url}: {type(exc).__name__}: {exc}") from exc
        secrets = (refresh_token,)
        if response.status_code != 200:
            detail = redact(response.text[:300], secrets)
            raise _RefreshFailed(f"{self._token_url} answered {response.status_code}: {detail}")
        try:
            answer = response.json()
        except ValueError as exc:
            raise _RefreshFailed(f"{self._token_url} answered something not JSON") from exc
        access = answer.get("access_token") if isinstance(answer, dict) else None
        if not isinstance(access, str) or not access:
            raise _RefreshFailed(f"{self._token_url} answered without an access_token")
        renewed = answer.get("refresh_token")
        expires_in = answer.get("expires_in")
        if not isinstance(expires_in, int | float) or expires_in <= 0:
            expires_in = constants.OAUTH_DEFAULT_EXPIRES_S
        scope = answer.get("scope")
        return OAuthCredential(
            access_token=access,
            refresh_token=renewed if isinstance(renewed, str) and renewed else refresh_token,
            expires_at_ms=int((self._clock() + float(expires_in)) * 1000),
            scopes=tuple(scope.split()) if isinstance(scope, str) and scope else scopes,
        )

    @contextlib.contextmanager
    def _file_lock(self) -> Iterator[None]:
        """An exclusive lock on `oauth.json.lock`, waited for at most the refresh timeout."""
        try:
            self._lock_path.parent.mkdir(parents=True, exist_ok=True)
            handle = self._lock_path.open("a+b")
        except OSError as exc:
            logger.warning("cannot open the lock file %s: %s", self._lock_path, exc)
            yield
            return
        with handle:
            deadline = time.monotonic() + self._timeout_s + constants.OAUTH_REFRESH_TIMEOUT_S
            while True:
                try:
                    fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        logger.warning("refreshing without %s: held too long", self._lock_path)
                        break
                    time.sleep(_LOCK_POLL_S)
            try:
                yield
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


class _RefreshFailed(Exception):
    """The token endpoint did not give us a new token (internal; never leaves this module)."""


@dataclass(slots=True)
class _WatchedFile:
    """A credential file, re-read whenever its size or modification time changes."""

    path: Path
    stamp: tuple[int, int] | None = None
    cached: OAuthCredential | None = None
    problem: str | None = None

    def credential(self) -> OAuthCredential | None:
        try:
            stat = self.path.stat()
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            self.stamp, self.cached = None, None
            self.problem = "it is missing" if isinstance(exc, FileNotFoundError) else str(exc)
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        if stamp != self.stamp:
            self.stamp = stamp
            try:
                self.cached, self.problem = read_credential(self.path), None
            except (OSError, ValueError) as exc:
                self.cached, self.problem = None, str(exc)
                logger.warning("ignoring the credential file %s: %s", self.path, exc)
        return self.cached


def _expiry_text(credential: OAuthCredential, now: float) -> str:
    left = credential.seconds_left(now)
    return "no known expiry" if left is None else f"valid for {left / 60:.0f} min"
