"""The durable fact store on a real SQLite file: merge, supersede, search, resident set,
demotion, wipe and garbage collection at the cap."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.knowledge import FactStore, KnowledgeError
from live_memory.memory import LedgerFact

ROOT = "/repo"


class Clock:
    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


def _shape(i: int) -> LedgerFact:
    path = f"src/mod_{i:04d}/handler.py"
    return LedgerFact(
        f"Function handle_record_{i:04d} in {path} parses RecordType{i:04d} records.",
        ((path, f"sha{i}"),),
    )


@pytest.fixture
def store(tmp_path: Path) -> FactStore:
    return FactStore(tmp_path / "facts.sqlite3", max_facts=10_000, clock=Clock())


def test_two_thousand_facts_of_one_shape_are_all_kept_and_each_is_found_by_its_name(
    store: FactStore,
) -> None:
    report = store.merge(ROOT, [_shape(i) for i in range(2000)])
    assert (report.added, report.confirmed, report.superseded) == (2000, 0, 0)
    for i in (0, 42, 1999):
        found = store.search(ROOT, f"What does handle_record_{i:04d} do?", limit=3)
        assert found.facts[0].fact.text == _shape(i).text
        assert found.facts[0].fact.sources == _shape(i).sources
    again = store.merge(ROOT, [_shape(i) for i in range(2000)])
    assert (again.added, again.confirmed) == (0, 2000)
    assert store.counts(ROOT)["current"] == 2000


def test_a_merge_in_chunks_adds_up_to_one_merge_and_forget_removes_only_its_ids(
    store: FactStore,
) -> None:
    store.merge("/other", [_shape(7)])
    report = store.merge_in_chunks(ROOT, [_shape(i) for i in range(450)], chunk=200)
    assert (report.added, report.confirmed, len(report.new_ids)) == (450, 0, 450)
    again = store.merge_in_chunks(ROOT, [_shape(i) for i in range(500)], chunk=200)
    assert (again.added, again.confirmed) == (50, 450)  # idempotent across chunk borders
    assert store.forget(ROOT, [*report.new_ids[:300], 10**9]) == 300
    assert store.counts(ROOT)["current"] == 200
    assert store.search(ROOT, "handle_record_0010", limit=1).facts == []  # FTS rows gone too
    assert store.forget("/other", report.new_ids) == 0  # ids of another workspace: untouched
    assert store.counts("/other")["current"] == 1


def test_a_newer_fact_about_the_same_subject_supersedes_the_older(store: FactStore) -> None:
    store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 3.")])
    report = store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 5.")])
    assert report.superseded == 1
    rows = store.rows(ROOT)
    assert [r.fact.text for r in rows if r.current] == ["MAX_RETRIES in src/config.py is 5."]
    old = next(r for r in rows if not r.current)
    assert old.superseded_by == next(r.id for r in rows if r.current)
    assert store.search(ROOT, "MAX_RETRIES", limit=5).matched == 1  # the old one is not found


def test_search_leaves_out_what_the_window_holds_and_counts_uses(store: FactStore) -> None:
    store.merge(ROOT, [_shape(1), _shape(2)])
    held = frozenset({_shape(1).text.lower().rstrip(".")})
    found = store.search(ROOT, "handle_record_0001 and handle_record_0002", limit=5, skip=held)
    assert [f.fact.text for f in found.facts] == [_shape(2).text]
    assert found.matched == 2
    assert {r.fact.text: r.uses for r in store.rows(ROOT)} == {
        _shape(1).text: 1,
        _shape(2).text: 1,
    }
    assert store.search(ROOT, "what is it?", limit=5).matched == 0


def test_search_stays_inside_its_workspace(store: FactStore) -> None:
    store.merge(ROOT, [_shape(1)])
    store.merge("/other", [_shape(2)])
    assert store.search("/other", "handle_record_0001", limit=5).matched == 0
    assert store.wipe(ROOT) == 1
    assert store.counts(ROOT)["stored"] == 0
    assert store.counts("/other")["stored"] == 1


def test_a_search_past_its_deadline_returns_nothing(store: FactStore) -> None:
    store.merge(ROOT, [_shape(i) for i in range(300)])
    found = store.search(ROOT, "handler records parses", limit=5, deadline_s=-1.0)
    assert (found.facts, found.matched) == ([], 0)


def test_resident_set_is_the_most_used_facts_within_the_budget_in_learnt_order(
    store: FactStore,
) -> None:
    store.merge(ROOT, [_shape(i) for i in range(50)])
    for i in (30, 10, 30, 20):
        store.search(ROOT, f"handle_record_{i:04d}", limit=1)
    budget = 3 * (len(_shape(0).text) + 3)
    resident = store.resident(ROOT, budget, 100)
    assert [f.text for f in resident] == [_shape(i).text for i in (10, 20, 30)]


def test_demotion_marks_facts_citing_a_changed_file_and_confirming_clears_it(
    store: FactStore,
) -> None:
    store.merge(ROOT, [_shape(1), _shape(2)])
    assert store.demote(ROOT, {"src/mod_0001/handler.py": "new-sha"}) == 1
    assert store.demote(ROOT, {"src/mod_0002/handler.py": "sha2"}) == 0
    facts = {f.text: f.stale for f in store.current(ROOT)}
    assert facts == {_shape(1).text: True, _shape(2).text: False}
    store.merge(ROOT, [_shape(1)])
    assert not any(f.stale for f in store.current(ROOT))


def test_at_the_cap_superseded_then_demoted_then_least_used_facts_go(tmp_path: Path) -> None:
    store = FactStore(tmp_path / "f.sqlite3", max_facts=5, clock=Clock())
    store.merge(ROOT, [_shape(i) for i in range(4)])
    store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 3.")])
    store.search(ROOT, "handle_record_0000 handle_record_0001", limit=2)
    store.demote(ROOT, {"src/mod_0002/handler.py": "changed"})
    # A successor (6 rows): the superseded row goes first.
    assert store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 5.")]).evicted == 1
    assert all(r.current for r in store.rows(ROOT))
    # Then the demoted fact, then the least used, longest unconfirmed (handle_record_0003).
    assert store.merge(ROOT, [_shape(10), _shape(11)]).evicted == 2
    texts = {r.fact.text for r in store.rows(ROOT)}
    assert _shape(2).text not in texts and _shape(3).text not in texts
    assert {_shape(0).text, _shape(1).text, _shape(10).text, _shape(11).text} <= texts
    assert store.counts(ROOT)["stored"] == 5


def test_retired_facts_are_collected_under_the_cap(tmp_path: Path) -> None:
    clock = Clock()
    store = FactStore(tmp_path / "f.sqlite3", retire_after_s=100.0, clock=clock)
    store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 3.")])
    store.merge(ROOT, [LedgerFact("MAX_RETRIES in src/config.py is 5.")])
    assert store.counts(ROOT)["superseded"] == 1
    clock.now += 1_000.0
    assert store.merge(ROOT, [_shape(1)]).evicted == 1
    assert store.counts(ROOT) | {"max_facts": 0} == {
        "stored": 2,
        "current": 2,
        "superseded": 0,
        "demoted": 0,
        "max_facts": 0,
    }


def test_a_closed_store_raises_a_knowledge_error(store: FactStore) -> None:
    store.close()
    with pytest.raises(KnowledgeError, match="closed"):
        store.merge(ROOT, [_shape(1)])
