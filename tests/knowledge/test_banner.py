"""The session-start banner: exact text when healthy, degraded and down."""

from __future__ import annotations

from live_memory.knowledge import health_banner

HEALTH: dict[str, object] = {
    "status": "ok",
    "version": "0.1.0",
    "uptime_s": 12.0,
    "workspaces_active": 2,
    "workspaces_known": 12,
    "usage_today": {"questions": 3, "cost_usd": 0.0213},
    "transcripts": {"pending": 0, "processing": 0, "done": 7, "failed": 0},
}
STATS: dict[str, object] = {
    "context": {"used_tokens": 82_000, "max_tokens": 200_000, "fill_pct": 41.0}
}


def test_a_healthy_server_gets_the_one_line_summary() -> None:
    assert health_banner(HEALTH, STATS) == (
        "live-memory: 3 questions today · $0.02 · window 41% · queue 0 pending · 12 workspaces"
    )


def test_failures_come_first_when_transcripts_failed() -> None:
    health = {**HEALTH, "transcripts": {"pending": 1, "processing": 0, "done": 4, "failed": 2}}

    assert health_banner(health, STATS) == (
        "live-memory: ⚠ 2 transcripts failed · 3 questions today · $0.02 · window 41% · "
        "queue 1 pending · 12 workspaces"
    )


def test_a_down_server_gets_a_clear_line_naming_its_url() -> None:
    assert health_banner(None, None, server_url="http://127.0.0.1:7799") == (
        "live-memory: server not running at http://127.0.0.1:7799 — "
        "start it with `live-memory serve`"
    )
    assert health_banner(None, None) == (
        "live-memory: server not running at http://127.0.0.1:7711 — "
        "start it with `live-memory serve`"
    )


def test_counts_of_one_are_singular_and_a_missing_provider_is_a_warning() -> None:
    health = {
        **HEALTH,
        "status": "no_provider",
        "workspaces_known": 1,
        "usage_today": {"questions": 1, "cost_usd": 0.001},
        "transcripts": {"pending": 0, "failed": 1},
    }

    assert health_banner(health, {"context": {"fill_pct": 7.6}}) == (
        "live-memory: ⚠ 1 transcript failed · ⚠ no model provider configured · 1 question today"
        " · <$0.01 · window 8% · queue 0 pending · 1 workspace"
    )


def test_segments_without_data_are_left_out_not_shown_as_zero() -> None:
    minimal = {"status": "ok", "workspaces_active": 4}

    assert health_banner(minimal, None) == "live-memory: 4 workspaces"
    assert health_banner({"status": "ok"}, None) == "live-memory: running"
