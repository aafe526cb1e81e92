"""The dashboard's pure parts: chart geometry, ledger/file rows, snapshot pages, stuck actors,
and the bounded question/compaction records kept in a workspace's counters."""

from __future__ import annotations

from datetime import date

from live_memory.actors.inspection import fact_rows, file_rows, snapshot_detail
from live_memory.agent.activity import append_bounded, question_preview, records_from_state
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.gateway.ui.charts import BAR_WIDTH, day_bars, window_bar
from live_memory.gateway.ui.gather import mark_actors
from live_memory.memory.model import FileContext, LedgerFact
from live_memory.workspace import WorkspaceCounters

SHA = "ab" * 32


def test_window_bar_stacks_segments_on_the_context_scale() -> None:
    layout = {
        "stable": 1000,
        "frozen": 500,
        "history": 300,
        "last_turn": 200,
        "max_tokens": 10_000,
        "threshold_tokens": 8500,
        "floor_tokens": 6000,
    }
    rects, marks, scale = window_bar(layout)
    assert scale == 10_000
    assert [r.key for r in rects] == ["stable", "frozen", "history", "last_turn"]
    assert [r.x for r in rects] == [0.0, 80.0, 120.0, 144.0]
    assert rects[-1].width == 16.0
    assert [(m.label, m.x) for m in marks] == [("floor", 480.0), ("compaction threshold", 680.0)]


def test_window_bar_grows_its_scale_for_an_overfull_window() -> None:
    rects, _, scale = window_bar({"stable": 30_000, "max_tokens": 10_000})
    assert scale == 30_000
    assert rects[0].width == BAR_WIDTH


def test_day_bars_cover_every_day_and_stack_cached_uncached_output() -> None:
    rows = [
        {"day": "2026-12-01", "input": 1000, "cache_read": 600, "output": 100, "cost_usd": 0.02},
        {"day": "2026-11-29", "input": 100, "cache_read": 0, "output": 10, "cost_usd": 0.01},
    ]
    bars = day_bars(rows, 3, date(2026, 12, 1))
    assert [b.day for b in bars] == ["2026-11-29", "2026-11-30", "2026-12-01"]
    assert bars[1].tokens == 0 and bars[1].cost_height == 0.0
    today = bars[2]
    assert [(kind, tokens) for kind, tokens, _, _ in today.parts] == [
        ("cache_read", 600),
        ("uncached", 400),
        ("output", 100),
    ]
    assert sum(h for *_, h in today.parts) == 120.0  # the busiest day fills the chart
    assert today.cost_height == 120.0 and bars[0].cost_height == 60.0


def test_fact_rows_search_text_category_and_sources_and_show_freshness() -> None:
    facts = [
        LedgerFact("Config lives in settings.py", (("src/settings.py", SHA),), "architecture"),
        LedgerFact("Never call exit() in a handler", (), "gotcha", stale=True),
        LedgerFact("key is AKIAABCDEFGHIJKLMNOP here", (), "gotcha"),
    ]
    rows, matched = fact_rows(facts, "", 10)
    assert matched == 3
    assert rows[0]["sources"] == [{"path": "src/settings.py", "sha256": SHA[:12]}]
    assert [r["freshness"] for r in rows] == ["current", "demoted", "current"]
    assert "AKIAABCDEFGHIJKLMNOP" not in str(rows[2]["text"])  # redaction applies
    assert fact_rows(facts, "SETTINGS.PY", 10)[1] == 1
    assert fact_rows(facts, "gotcha", 10)[1] == 2
    capped, matched = fact_rows(facts, "", 1)
    assert len(capped) == 1 and matched == 3


def test_file_rows_show_state_and_presence_of_content_never_bytes() -> None:
    files = [
        FileContext("b.py", SHA, 10, "observed", "current", "secret bytes"),
        FileContext("a.py", SHA, 5, "read", "stale"),
    ]
    rows = file_rows(files, 10)
    assert [r["path"] for r in rows] == ["a.py", "b.py"]
    assert rows[1]["with_content"] is True and rows[0]["with_content"] is False
    assert "secret bytes" not in str(rows)


def test_snapshot_detail_reads_a_passivated_workspace_without_waking_it() -> None:
    counters = WorkspaceCounters(questions_answered=3, input=100, cache_read=25)
    counters.recent_questions = [{"question": "q1"}, {"question": "q2"}]
    state = {
        "ledger": [{"text": "a fact", "sources": [["x.py", SHA]], "category": "task"}],
        "files": [{"path": "x.py", "sha256": SHA, "size": 3, "state": "current"}],
        "compactions": 2,
        "counters": counters.to_state(),
    }
    body = snapshot_detail("/repo", state, "")
    assert body["state"] == "passivated"
    assert body["questions_answered"] == 3
    assert body["cache_hit_ratio"] == 0.25
    assert body["facts_total"] == 1 and body["files_total"] == 1
    assert [q["question"] for q in body["recent_questions"]] == ["q2", "q1"]  # newest first


def test_stuck_actors_are_flagged_past_the_threshold_and_errors_redacted() -> None:
    rows = mark_actors(
        [
            {"name": "a", "busy_s": 31.0, "last_error": None},
            {
                "name": "b",
                "busy_s": 1.0,
                "last_error": "token sk-ant-api03-abcdefghijklmnopqrstuvwx",
            },
        ],
        30.0,
    )
    assert [r["stuck"] for r in rows] == [True, False]
    assert "abcdefghijklmnopqrstuvwx" not in str(rows[1]["last_error"])


def test_a_question_within_what_a_client_waits_is_busy_not_stuck() -> None:
    """The default thresholds: 30 s for a message, the MCP client's wait for a question (a
    60 s budget flagged at 30 s was a false alarm)."""
    settings = load_settings({"HOME": "/nonexistent", "LIVE_MEMORY_DATA_DIR": "/nonexistent"})
    fork = {"kind": "fork", "busy_s": 45.0, "current_message": "question: where?"}
    actor = {"kind": "workspace", "busy_s": 45.0, "current_message": "Ask"}
    rows = mark_actors([fork, actor], settings.stuck_after_s, settings.fork_stuck_after_s)
    assert [r["stuck"] for r in rows] == [False, True]
    assert settings.fork_stuck_after_s == settings.mcp_timeout_s > settings.default_timeout_s
    late = mark_actors([fork | {"busy_s": settings.mcp_timeout_s + 1}], 30.0, 120.0)
    assert late[0]["stuck"]


def test_records_are_bounded_and_tolerate_old_snapshots() -> None:
    log: list[dict[str, object]] = []
    for i in range(C.DASHBOARD_RECENT_QUESTIONS + 5):
        append_bounded(log, {"i": i}, C.DASHBOARD_RECENT_QUESTIONS)
    assert len(log) == C.DASHBOARD_RECENT_QUESTIONS and log[-1] == {"i": 24}
    assert records_from_state("garbage", 5) == []
    assert records_from_state([{"a": 1}, 7], 5) == [{"a": 1}]
    restored = WorkspaceCounters.from_state({"recent_questions": "bad", "questions_answered": 1})
    assert restored.recent_questions == [] and restored.questions_answered == 1


def test_question_preview_is_redacted_flat_and_short() -> None:
    text = "why does\n\nthis fail with AKIAABCDEFGHIJKLMNOP? " + "x" * 500
    preview = question_preview(text)
    assert "\n" not in preview
    assert "AKIAABCDEFGHIJKLMNOP" not in preview
    assert len(preview) == C.DASHBOARD_QUESTION_PREVIEW_CHARS
