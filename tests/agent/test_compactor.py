"""Compaction with the summariser over the fake provider: history is folded in bounded chunks,
exactly the folded turns are dropped, and nothing is dropped when a summary fails or is empty."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from live_memory.agent.compactor import CompactionReport, compact_window
from live_memory.agent.services import Services, Stores, build_services
from live_memory.config import constants as C
from live_memory.config import load_settings
from live_memory.knowledge import FactStore, TranscriptQueue, UsageLedger
from live_memory.memory.model import Turn
from live_memory.memory.window import Window
from tests.support.fakes import Error, FakeProvider, Recorded, Reply, Text

FACT = "[architecture] The parser lives in src/parser.py."
PAIR_CHARS = 30_000  # a question and its answer: six pairs fill one summariser chunk
PAIRS = 12


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    with FakeProvider(default_reply=Text(FACT)) as provider:
        yield provider


def services_for(fake: FakeProvider, tmp_path: Path) -> Services:
    settings = load_settings(
        {
            "LIVE_MEMORY_DATA_DIR": str(tmp_path / "data"),
            "ANTHROPIC_API_KEY": "dummy",
            "ANTHROPIC_BASE_URL": fake.anthropic_base_url,
            "LIVE_MEMORY_MAX_CONTEXT_TOKENS": "20000",
        },
        home=tmp_path,
    )
    data = tmp_path / "data"
    stores = Stores(UsageLedger(data / "usage.sqlite3"), TranscriptQueue(data / "queue.sqlite3"))
    return build_services(settings, stores)


def long_conversation(root: Path) -> Window:
    window = Window(str(root))
    window.freeze()
    half = PAIR_CHARS // 2
    for i in range(PAIRS):
        window.append_qa(f"question {i} " + "q" * half, f"answer {i} " + "a" * half)
    return window


def compact(window: Window, services: Services) -> CompactionReport:
    report = CompactionReport()

    async def run() -> None:
        try:
            assert await compact_window(window, services, report=report)
        finally:
            if services.provider is not None:
                await services.provider.aclose()
            services.stores.close()

    asyncio.run(run())
    return report


def material(recorded: Recorded) -> str:
    return str(json.dumps(recorded.body["messages"]))


def questions_left(window: Window) -> list[int]:
    return [int(t.text.split()[1]) for t in window.history if t.kind == "question"]


def test_old_history_is_folded_in_bounded_chunks_and_only_the_folded_turns_go(
    fake: FakeProvider, tmp_path: Path
) -> None:
    window = long_conversation(tmp_path)
    report = compact(window, services_for(fake, tmp_path))
    summaries = fake.requests
    assert report.summaries == len(summaries) == 2  # ten old pairs: six, then four
    assert all(len(material(r)) <= C.SUMMARY_MAX_INPUT_CHARS + 2_000 for r in summaries)
    assert "question 0 " in material(summaries[0]) and "question 9 " in material(summaries[1])
    assert "question 10 " not in material(summaries[1])
    assert questions_left(window) == [10, 11]  # the newest pairs are kept verbatim
    assert [f.text for f in window.ledger] == [FACT.split("] ", 1)[1]]


def test_a_failed_summary_keeps_every_turn_it_did_not_fold(
    fake: FakeProvider, tmp_path: Path
) -> None:
    replies: list[Reply] = [Text(FACT), Error.unauthorized()]
    fake.responder = lambda _: replies.pop(0) if replies else Text(FACT)
    window = long_conversation(tmp_path)
    compact(window, services_for(fake, tmp_path))
    assert questions_left(window) == [6, 7, 8, 9, 10, 11]  # the first chunk was folded in


@pytest.mark.parametrize("reply", ["", "# Ledger\n\n"])
def test_a_summary_without_facts_drops_nothing(
    fake: FakeProvider, tmp_path: Path, reply: str
) -> None:
    fake.default_reply = Text(reply)
    window = long_conversation(tmp_path)
    before = list(window.history)
    compact(window, services_for(fake, tmp_path))
    assert [t for t in window.history if t.kind in ("question", "answer")] == before
    assert window.ledger == []
    assert isinstance(before[0], Turn)


def test_with_the_store_compactions_add_facts_instead_of_regenerating_the_ledger(
    fake: FakeProvider, tmp_path: Path
) -> None:
    """Each summary names only its material's facts; with the store none of the earlier
    ones is lost, and the window's ledger is the store's resident set."""
    data = tmp_path / "data"
    base = services_for(fake, tmp_path)
    store = FactStore(data / "facts.sqlite3")
    stores = Stores(UsageLedger(data / "u.sqlite3"), TranscriptQueue(data / "q.sqlite3"), store)
    services = build_services(base.settings, stores)
    base.stores.close()
    calls = iter(range(1000))
    fake.responder = lambda recorded: Text(
        f"[gotcha] handler_{next(calls)} in src/h.py retries twice."
    )
    window = long_conversation(tmp_path)
    root = window.root
    report = CompactionReport()

    async def run() -> None:
        try:
            for _ in range(2):
                window.append_qa("more " + "q" * PAIR_CHARS, "more " + "a" * PAIR_CHARS)
                await compact_window(window, services, report=report, force=True)
        finally:
            assert services.provider is not None
            await services.provider.aclose()

    asyncio.run(run())
    reopened = FactStore(data / "facts.sqlite3")
    stored = [f.text for f in reopened.current(root)]
    assert report.summaries >= 2
    assert stored == [f"handler_{i} in src/h.py retries twice." for i in range(report.summaries)]
    assert [f.text for f in window.ledger] == stored  # all fit in the resident share
    assert all(f.category == "gotcha" for f in reopened.current(root))
    reopened.close()
    services.stores.close()
