"""Property tests of the fact store's merge, supersede and cap (hypothesis).

Examples: 60 sequences through the real SQLite store (one in-memory database each), 300
row sets through the pure garbage-collection order. Facts are drawn from a few shapes over a
small pool of identifiers and paths, with restatements (a changed value), exact repeats and
spacing/punctuation variants, so confirmations, supersessions and near-duplicates all occur.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from live_memory.knowledge import FactRow, FactStore, GcPolicy, eviction_key, gc_victims
from live_memory.memory import LedgerFact, fact_signature, normalise_fact

ROOT = "/repo"
NAMES = [f"handle_record_{i}" for i in range(6)] + ["SessionManager", "MAX_RETRIES"]
PATHS = ["src/a.py", "src/b/handler.py", "lib/c.ts"]
SHAPES = [
    "Function {name} in {path} parses records with value {value}.",
    "{name} is defined in {path} and returns {value} items",
    "The {name} helper caches results",
]


@st.composite
def facts(draw: st.DrawFn) -> LedgerFact:
    text = draw(st.sampled_from(SHAPES)).format(
        name=draw(st.sampled_from(NAMES)),
        path=draw(st.sampled_from(PATHS)),
        value=draw(st.integers(0, 3)),
    )
    if draw(st.booleans()):
        text = "  " + text.replace(" ", "  ") + "."  # a spacing/punctuation variant
    return LedgerFact(text, stale=draw(st.booleans()) and draw(st.booleans()))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    batches=st.lists(st.lists(facts(), max_size=12), min_size=1, max_size=6),
    cap=st.integers(1, 40),
)
def test_merge_supersede_and_cap_keep_their_invariants(
    batches: list[list[LedgerFact]], cap: int
) -> None:
    store = FactStore(Path(":memory:"), max_facts=cap, clock=Clock())
    seen_signatures: set[str] = set()
    evicted = 0
    for batch in batches:
        evicted += store.merge(ROOT, batch).evicted
        seen_signatures |= {fact_signature(f.text) for f in batch}
        rows = store.rows(ROOT)
        current = [r for r in rows if r.current]
        # The cap holds after every merge.
        assert len(rows) <= cap
        # No two current facts are the same fact.
        norms = [normalise_fact(r.fact.text) for r in current]
        assert len(norms) == len(set(norms))
        # A fact is only ever superseded by one naming the same identifiers and paths.
        by_id = {r.id: r for r in rows}
        for row in rows:
            if row.superseded_by is not None and row.superseded_by in by_id:
                assert by_id[row.superseded_by].signature == row.signature
                assert by_id[row.superseded_by].id > row.id
        # Without eviction, every signature taught is still represented by a current fact:
        # facts naming different identifiers are never merged away.
        if evicted == 0:
            assert {r.signature for r in current} == seen_signatures
    # Merging the last batch again adds no new subject and ends in the same current facts
    # (its updates replay, the last statement of each subject winning again).
    last = batches[-1]
    if last and evicted == 0:
        before = {r.norm for r in store.rows(ROOT) if r.current}
        again = store.merge(ROOT, last)
        assert again.added == 0
        assert {r.norm for r in store.rows(ROOT) if r.current} == before
    store.close()


@st.composite
def rows(draw: st.DrawFn) -> list[FactRow]:
    count = draw(st.integers(0, 30))
    out = []
    for i in range(count):
        kind = draw(st.sampled_from(["current", "superseded", "demoted"]))
        out.append(
            FactRow(
                i + 1,
                LedgerFact(f"fact_{i} holds"),
                0.0,
                draw(st.floats(0, 100)),
                draw(st.integers(0, 5)),
                superseded_by=count + 1 if kind == "superseded" else None,
                superseded_at=draw(st.floats(0, 100)) if kind == "superseded" else None,
                demoted_at=draw(st.floats(0, 100)) if kind == "demoted" else None,
            )
        )
    return out


@settings(max_examples=200, deadline=None)
@given(rows=rows(), cap=st.integers(0, 30), retire=st.floats(1, 200))
def test_gc_honours_the_cap_and_removes_the_least_valuable_first(
    rows: list[FactRow], cap: int, retire: float
) -> None:
    now = 150.0
    victims = set(gc_victims(rows, GcPolicy(cap, retire), now))
    kept = [r for r in rows if r.id not in victims]
    assert len(kept) <= cap
    horizon = now - retire
    for row in kept:  # nothing retired survives
        assert not (row.superseded_at is not None and row.superseded_at < horizon)
        assert not (row.demoted_at is not None and row.demoted_at < horizon)
    removed_for_cap = [r for r in rows if r.id in victims and eviction_key(r)[0] == 2]
    if removed_for_cap:  # a current fact goes only once no superseded or demoted one is left
        assert all(eviction_key(r)[0] == 2 for r in kept)
        worst_kept = min(eviction_key(r) for r in kept) if kept else None
        if worst_kept is not None:
            assert max(eviction_key(r) for r in removed_for_cap) < worst_kept
