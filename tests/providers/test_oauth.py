"""The subscription token source against a fake OAuth token endpoint over loopback HTTP."""

from __future__ import annotations

import json
import stat
import threading
import time
from pathlib import Path

import pytest

from live_memory.config import constants
from live_memory.errors import ProviderAuthError
from live_memory.providers import OAuthTokenSource
from tests.support.fakes import FakeTokenEndpoint

HOUR_MS = 3_600_000


def now_ms() -> int:
    return int(time.time() * 1000)


def write_claude(path: Path, access: str, expires_at_ms: int | None, refresh: str = "r0") -> Path:
    section: dict[str, object] = {"accessToken": access, "refreshToken": refresh}
    if expires_at_ms is not None:
        section["expiresAt"] = expires_at_ms
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"claudeAiOauth": section, "other": "kept"}), encoding="utf-8")
    return path


def snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def source_for(tmp_path: Path, endpoint: FakeTokenEndpoint) -> OAuthTokenSource:
    return OAuthTokenSource(
        tmp_path / ".claude" / ".credentials.json",
        tmp_path / "data" / constants.OAUTH_STORE_FILE_NAME,
        token_url=endpoint.url,
    )


def test_fresh_claude_code_token_is_used_without_a_refresh(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() + HOUR_MS)

    assert source_for(tmp_path, endpoint)() == "cc-access"
    assert endpoint.requests == []
    assert not (tmp_path / "data" / "oauth.json").exists()


def test_token_near_expiry_is_refreshed_first_and_persisted_to_the_data_dir_only(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    claude = write_claude(
        tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() + 60_000, "cc-refresh"
    )
    before = snapshot(claude)

    token = source_for(tmp_path, endpoint)()

    assert token == "fake-access-1"
    assert endpoint.requests == [
        {
            "grant_type": "refresh_token",
            "refresh_token": "cc-refresh",
            "client_id": constants.CLAUDE_OAUTH_CLIENT_ID,
        }
    ]
    store = tmp_path / "data" / "oauth.json"
    saved = json.loads(store.read_text(encoding="utf-8"))["claudeAiOauth"]
    assert saved["accessToken"] == "fake-access-1"
    assert saved["refreshToken"] == "fake-refresh-1"
    assert saved["expiresAt"] > now_ms() + HOUR_MS - 60_000
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert snapshot(claude) == before  # Claude Code's file is never written


def test_a_new_source_reuses_the_persisted_token_without_refreshing_again(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() + 60_000)
    assert source_for(tmp_path, endpoint)() == "fake-access-1"

    assert source_for(tmp_path, endpoint)() == "fake-access-1"  # e.g. after a restart
    assert len(endpoint.requests) == 1


def test_a_token_claude_code_refreshed_later_is_adopted(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    claude = tmp_path / ".claude" / ".credentials.json"
    write_claude(claude, "cc-old", now_ms() + 60_000)
    source = source_for(tmp_path, endpoint)
    assert source() == "fake-access-1"  # ours now expires in an hour

    write_claude(claude, "cc-new", now_ms() + 8 * HOUR_MS)  # Claude Code refreshed itself

    assert source() == "cc-new"
    assert source.describe()["source"] == "claude_code"
    assert len(endpoint.requests) == 1


def test_concurrent_callers_share_one_refresh(tmp_path: Path, endpoint: FakeTokenEndpoint) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() + 60_000)
    sources = [source_for(tmp_path, endpoint), source_for(tmp_path, endpoint)]  # a hot swap
    start = threading.Barrier(8)
    tokens: list[str] = []

    def call(index: int) -> None:
        start.wait(timeout=5)
        tokens.append(sources[index % 2]())

    threads = [threading.Thread(target=call, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)

    assert tokens == ["fake-access-1"] * 8
    assert len(endpoint.requests) == 1  # a second refresh would have spent a rotated token


def test_failed_refresh_keeps_a_token_that_is_still_valid(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() + 60_000)
    endpoint.fail_next(503)
    source = source_for(tmp_path, endpoint)

    assert source() == "cc-access"
    assert source() == "cc-access"  # no second attempt inside the retry pause
    assert len(endpoint.requests) == 1
    assert "503" in str(source.describe()["last_error"])


def test_expired_token_that_cannot_be_refreshed_is_an_auth_error_naming_the_fix(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", now_ms() - 1000)
    endpoint.fail_next(400)

    with pytest.raises(ProviderAuthError, match="log in again") as caught:
        source_for(tmp_path, endpoint)()

    assert "r0" not in str(caught.value)


def test_refused_token_is_replaced_by_a_refreshed_one(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-revoked", now_ms() + HOUR_MS)
    source = source_for(tmp_path, endpoint)
    assert source() == "cc-revoked"

    source.invalidate("cc-revoked")

    assert source() == "fake-access-1"


def test_a_credential_without_expiry_is_used_as_is(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    write_claude(tmp_path / ".claude" / ".credentials.json", "cc-access", None)

    assert source_for(tmp_path, endpoint)() == "cc-access"
    assert endpoint.requests == []


def test_missing_credential_file_is_an_auth_error_naming_it(
    tmp_path: Path, endpoint: FakeTokenEndpoint
) -> None:
    with pytest.raises(ProviderAuthError, match=r"\.credentials\.json"):
        source_for(tmp_path, endpoint)()
