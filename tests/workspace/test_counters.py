"""WorkspaceCounters' snapshot state: what asdict gave, without its recursive deep copy."""

from __future__ import annotations

from dataclasses import asdict

from live_memory.workspace import WorkspaceCounters


def test_to_state_is_asdict_and_later_changes_do_not_reach_it() -> None:
    counters = WorkspaceCounters(questions_answered=2, input=10)
    counters.recent_questions.append({"question": "q?", "tokens": 3})
    counters.compaction_log.append({"at": 1.0, "tier": "history"})
    counters.commits["linear"] = 2
    counters.recall["hits"] = 1
    state = counters.to_state()
    assert state == asdict(counters)
    assert WorkspaceCounters.from_state(state) == counters

    counters.recent_questions[0]["tokens"] = 99
    counters.recent_questions.append({"question": "next"})
    counters.commits["linear"] = 3
    counters.recall["hits"] = 5
    counters.compaction_log[0]["tier"] = "files"
    assert state["recent_questions"] == [{"question": "q?", "tokens": 3}]
    assert state["commits"] == {"linear": 2, "race_adopted": 0, "race_dropped": 0}
    assert state["recall"]["hits"] == 1  # type: ignore[index]
    assert state["compaction_log"] == [{"at": 1.0, "tier": "history"}]
