"""Window B: learning, staleness, the frozen block and its append-only deltas, budgets."""

from __future__ import annotations

import hashlib

from live_memory.config import constants as C
from live_memory.memory.ledger import STALE_LEDGER_HEADING
from live_memory.memory.model import FileSource, LedgerFact, Turn
from live_memory.memory.window import Window

ROOT = "/home/dev/project"


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def observe(window: Window, path: str, text: str, *, source: FileSource = "observed") -> bool:
    return window.observe(path, text, sha(text), len(text.encode()), source=source)


def deltas(window: Window) -> list[Turn]:
    return [t for t in window.history if t.kind in ("observation", "ack")]


# --- learning ------------------------------------------------------------------------------
def test_observe_holds_current_content_and_reports_new_bytes_only_once() -> None:
    window = Window(ROOT)
    assert observe(window, "src/a.py", "print('a')\n") is True
    ctx = window.files["src/a.py"]
    assert (ctx.content, ctx.state, ctx.source) == ("print('a')\n", "current", "observed")
    assert ctx.sha256 == sha("print('a')\n")
    first_use = ctx.last_used
    assert observe(window, "src/a.py", "print('a')\n") is False
    assert window.files["src/a.py"].last_used > first_use
    assert observe(window, "src/a.py", "print('b')\n") is True
    assert window.files["src/a.py"].content == "print('b')\n"


def test_live_tee_supersedes_the_preload_flag_but_a_preload_never_downgrades_a_tee() -> None:
    window = Window(ROOT)
    sources = []
    for text, source in (("v1", "preloaded"), ("v2", "observed"), ("v3", "preloaded")):
        observe(window, "docs/a.md", text, source=source)  # type: ignore[arg-type]
        sources.append(window.files["docs/a.md"].source)
    assert sources == ["preloaded", "observed", "observed"]
    assert window.files["docs/a.md"].content == "v3"


def test_observe_of_a_stale_file_with_the_same_bytes_makes_it_current_again() -> None:
    window = Window(ROOT)
    observe(window, "a.py", "x = 1\n")
    window.mark_stale("a.py")
    assert observe(window, "a.py", "x = 1\n") is True
    assert window.files["a.py"].state == "current"
    assert window.files["a.py"].content == "x = 1\n"


def test_observed_content_replaces_a_pending_recently_modified_hint() -> None:
    window = Window(ROOT)
    window.record_read("a.py", sha("old"), 3)
    assert window.note_modified("a.py") is True
    observe(window, "a.py", "new")
    assert window.drain_recently_modified() == []


def test_record_read_remembers_the_file_in_the_manifest_without_content() -> None:
    window = Window(ROOT)
    window.record_read("src/b.py", sha("b"), 1)
    ctx = window.files["src/b.py"]
    assert (ctx.content, ctx.source, ctx.state) == (None, "read", "current")
    assert window.pending == {}


def test_record_read_of_unchanged_bytes_keeps_held_content_and_refreshes_lru() -> None:
    window = Window(ROOT)
    observe(window, "a.py", "body")
    before = window.files["a.py"].last_used
    window.record_read("a.py", sha("body"), 4)
    ctx = window.files["a.py"]
    assert (ctx.content, ctx.source) == ("body", "observed")
    assert ctx.last_used > before


def test_record_read_of_changed_bytes_drops_held_content_and_tells_the_model() -> None:
    window = Window(ROOT)
    observe(window, "a.py", "old body")
    window.ledger = [LedgerFact("a.py holds the parser", (("a.py", sha("old body")),))]
    window.freeze()
    frozen = window.frozen
    window.record_read("a.py", sha("new body"), 8)
    ctx = window.files["a.py"]
    assert (ctx.content, ctx.source, ctx.sha256) == (None, "read", sha("new body"))
    # The frozen block still shows the old bytes, so a delta must say they moved on.
    assert window.sync_deltas() is True
    assert window.frozen == frozen
    notice = window.history[-1].text
    assert "a.py" in notice and "CHANGED" in notice
    assert window.ledger[0].stale is True


def test_re_reading_a_stale_file_makes_it_current_with_a_fresh_hash() -> None:
    window = Window(ROOT)
    window.record_read("a.py", sha("v1"), 2)
    window.mark_stale("a.py")
    window.record_read("a.py", sha("v2"), 2)
    assert window.files["a.py"].state == "current"
    assert window.known_hashes() == {"a.py": sha("v2")}


def test_mark_stale_drops_content_keeps_the_slot_and_ignores_unknown_files() -> None:
    window = Window(ROOT)
    observe(window, "a.py", "body")
    assert window.mark_stale("a.py") is True
    ctx = window.files["a.py"]
    assert (ctx.state, ctx.content) == ("stale", None)
    assert window.mark_stale("never/seen.py") is False
    assert "never/seen.py" not in window.files


def test_mark_deleted_is_a_distinct_state_and_ignores_unknown_files() -> None:
    window = Window(ROOT)
    window.record_read("a.py", sha("a"), 1)
    assert window.mark_deleted("a.py") is True
    assert window.files["a.py"].state == "deleted"
    assert window.mark_deleted("b.py") is False
    assert window.counts() == {
        "loaded": 1,
        "with_content": 0,
        "stale": 0,
        "deleted": 1,
        "held_bytes": 0,
    }


def test_marking_a_file_demotes_only_the_facts_that_cite_it() -> None:
    window = Window(ROOT)
    window.record_read("a.py", sha("a"), 1)
    window.ledger = [
        LedgerFact("a.py parses input", (("a.py", sha("a")),)),
        LedgerFact("b.py renders output", (("b.py", sha("b")),)),
        LedgerFact("the project uses tabs"),
    ]
    window.mark_stale("a.py")
    assert [f.stale for f in window.ledger] == [True, False, False]
    assert window.ledger_demotions == 1
    window.mark_deleted("a.py")
    assert window.ledger_demotions == 1  # already demoted facts are not counted twice


def test_note_modified_hints_known_files_once_and_is_capped() -> None:
    window = Window(ROOT)
    assert window.note_modified("unknown.py") is False
    for i in range(C.RECENTLY_MODIFIED_HINT_MAX + 5):
        window.record_read(f"f{i}.py", sha(str(i)), 1)
        assert window.note_modified(f"f{i}.py") is True
    last = f"f{C.RECENTLY_MODIFIED_HINT_MAX + 4}.py"
    assert window.note_modified(last) is False  # already hinted
    hints = window.drain_recently_modified()
    assert len(hints) == C.RECENTLY_MODIFIED_HINT_MAX
    assert hints[-1] == last
    assert "f0.py" not in hints  # the oldest hints are the ones dropped
    assert window.drain_recently_modified() == []


# --- the frozen block ----------------------------------------------------------------------
def build_window() -> Window:
    window = Window(ROOT, tree="src/\n  a.py")
    window.ledger = [LedgerFact("Parser lives in src/a.py", (("src/a.py", sha("A")),))]
    observe(window, "docs/guide.md", "GUIDE TEXT", source="preloaded")
    observe(window, "src/z.py", "Z TEXT")
    observe(window, "src/a.py", "A")
    window.record_read("src/m.py", sha("M"), 1)
    window.record_read("src/gone.py", sha("G"), 1)
    window.mark_deleted("src/gone.py")
    return window


def test_freeze_renders_ledger_preloaded_observed_and_manifest_in_that_order() -> None:
    window = build_window()
    window.freeze()
    frozen = window.frozen
    assert frozen is not None
    order = [
        frozen.index("Parser lives in src/a.py"),
        frozen.index("## Reference documents"),
        frozen.index("GUIDE TEXT"),
        frozen.index("## Files the coding agent recently read or wrote"),
        frozen.index("### src/a.py"),
        frozen.index("### src/z.py"),
        frozen.index("## Files you have seen"),
    ]
    assert order == sorted(order)
    manifest = frozen[frozen.index("## Files you have seen") :]
    assert "- src/m.py\n" in manifest
    assert "- src/gone.py — DELETED" in manifest
    assert "src/m.py (" not in frozen  # manifest-only files carry no content block


def test_freeze_is_deterministic_whatever_the_observation_order() -> None:
    one, two = Window(ROOT), Window(ROOT)
    for path in ("b.py", "a.py", "c.py"):
        observe(one, path, path.upper())
    for path in ("c.py", "a.py", "b.py"):
        observe(two, path, path.upper())
    one.freeze()
    two.freeze()
    assert one.frozen == two.frozen
    again = one.frozen
    one.freeze()
    assert one.frozen == again


def test_freeze_of_an_empty_window_says_nothing_is_known_yet() -> None:
    window = Window(ROOT)
    window.freeze()
    assert window.frozen is not None
    assert "(empty: nothing distilled yet)" in window.frozen
    assert window.frozen.endswith("(none yet)")


def test_observation_after_freeze_reaches_model_as_delta_not_block_mutation() -> None:
    window = build_window()
    window.freeze()
    frozen = window.frozen
    window.append_qa("q1", "a1")
    observe(window, "src/new.py", "NEW CONTENT")
    assert window.frozen == frozen
    assert window.sync_deltas() is True
    assert window.frozen == frozen
    [observation] = window.history[2:]  # one user turn, no assistant ack to imitate
    assert (observation.role, observation.kind) == ("user", "observation")
    assert "NEW CONTENT" in observation.text
    assert window.history[:2] == [Turn("user", "question", "q1"), Turn("assistant", "answer", "a1")]


def test_many_changes_append_exactly_one_observation_turn() -> None:
    window = build_window()
    window.freeze()
    frozen = window.frozen
    observe(window, "src/new.py", "NEW")
    observe(window, "src/a.py", "A CHANGED BY TEE")
    window.mark_stale("src/z.py")
    window.mark_deleted("src/m.py")
    assert window.sync_deltas() is True
    assert len(window.history) == 1
    text = window.history[0].text
    assert "NEW" in text and "A CHANGED BY TEE" in text
    assert "- src/z.py — CHANGED" in text
    assert "- src/m.py — DELETED" in text
    assert "1 accumulated fact(s) cite changed files" not in text  # z.py/m.py are uncited
    assert window.frozen == frozen
    assert window.sync_deltas() is False
    assert len(window.history) == 1


def test_a_demoted_fact_is_announced_in_the_delta_not_by_rewriting_the_ledger() -> None:
    window = build_window()
    window.freeze()
    frozen = window.frozen
    assert frozen is not None and STALE_LEDGER_HEADING not in frozen
    window.mark_stale("src/a.py")
    window.sync_deltas()
    assert window.frozen == frozen
    assert "1 accumulated fact(s) cite changed files" in window.history[-1].text
    window.freeze()
    assert window.frozen is not None and STALE_LEDGER_HEADING in window.frozen


def test_sync_deltas_before_the_first_freeze_freezes_instead_of_appending() -> None:
    window = Window(ROOT)
    observe(window, "a.py", "A")
    assert window.sync_deltas() is False
    assert window.frozen is not None and "A" in window.frozen
    assert window.history == []
    assert window.pending == {}


def test_refreeze_drops_delta_turns_and_subsumes_their_state() -> None:
    window = Window(ROOT)
    window.freeze()
    window.append_qa("q1", "a1")
    observe(window, "a.py", "HELD")
    window.sync_deltas()
    window.append_qa("q2", "a2")
    window.freeze()
    assert [t.kind for t in window.history] == ["question", "answer", "question", "answer"]
    assert window.frozen is not None and "HELD" in window.frozen
    assert window.sync_deltas() is False


def test_copy_is_independent_of_the_original() -> None:
    window = build_window()
    window.freeze()
    fork = window.copy()
    fork.append_qa("q", "a")
    observe(fork, "fork-only.py", "F")
    fork.mark_stale("src/a.py")
    fork.note_modified("src/m.py")
    fork.freeze()
    assert window.history == []
    assert "fork-only.py" not in window.files
    assert window.files["src/a.py"].state == "current"
    assert window.ledger[0].stale is False
    assert window.recently_modified == []
    assert window.frozen != fork.frozen
    assert "fork-only.py" not in window.pending


def sent_chars(window: Window) -> int:
    """What the next question's prompt carries (system prompt and tools aside)."""
    fork = window.copy()
    fork.sync_deltas()
    assert fork.frozen is not None
    return len(fork.tree) + len(fork.frozen) + sum(len(t.text) for t in fork.history)


def test_budget_counts_every_observation_delta_the_prompt_carries() -> None:
    window = Window(ROOT, tree="T" * 100)
    window.freeze()
    assert window.budget_chars() == sent_chars(window)
    for version in range(5):  # a big file edited between questions
        observe(window, "big.py", str(version) * 10_000)
        assert window.budget_chars() == sent_chars(window)
        window.sync_deltas()
        window.append_qa(f"q{version}", "a")
    assert window.budget_chars() == sent_chars(window) > 5 * 10_000
    assert window.refrozen_chars() < 2 * 10_000  # a freeze keeps one copy
    assert window.estimated_tokens() == int(window.budget_chars() / window.chars_per_token)
    assert window.qa_turns == 10


def test_delta_share_grows_with_the_deltas_and_a_refresh_past_it_refreezes() -> None:
    window = Window(ROOT)
    window.freeze()
    observe(window, "big.py", "x" * 4000)
    assert window.delta_share(10_000) == window.delta_chars() / 4 / 10_000 > 0.1
    assert window.refresh(10_000, share=0.5) is False  # appended as a delta
    assert deltas(window)
    observe(window, "big.py", "y" * 4000)
    assert window.refresh(10_000, share=0.1) is True  # re-frozen instead
    assert deltas(window) == []
    assert window.frozen is not None and "y" * 4000 in window.frozen
    assert window.delta_chars() == 0


def test_the_budget_is_exact_through_every_kind_of_change() -> None:
    window = Window(ROOT, tree="T" * 10)
    steps = 0
    for i in range(60):
        path = f"f{i % 7}.py"
        match i % 9:
            case 0:
                observe(window, path, "x" * (i * 3))
            case 1:
                window.record_read(path, sha(str(i)), 3)
            case 2:
                window.mark_stale(path)
            case 3:
                window.mark_deleted(path)
            case 4:
                window.sync_deltas()
            case 5:
                window.append_qa("q" * i, "a" * i)
            case 6:
                window.learn([LedgerFact(f"fact {i} about {path}", ((path, sha("x")),))])
            case 7:
                window.shed_content(path)
            case _:
                observe(window, path, "p" * i, source="preloaded")
        if window.frozen is not None:
            assert window.prompt_chars() == sent_chars(window)
        fork = window.copy()
        refrozen = fork.refrozen_chars()
        fork.freeze()
        assert fork.frozen is not None
        assert refrozen == len(fork.tree) + len(fork.frozen) + fork.history.chars
        steps += 1
    assert steps == 60


def test_calibrate_moves_towards_the_observed_ratio_and_stays_bounded() -> None:
    window = Window(ROOT)
    window.calibrate(3000, 1000)  # 3 chars per token observed
    expected = (1 - C.CALIBRATION_EMA_ALPHA) * C.CHARS_PER_TOKEN + C.CALIBRATION_EMA_ALPHA * 3
    assert window.chars_per_token == expected
    for _ in range(200):
        window.calibrate(1_000_000, 1)
    assert C.CALIBRATION_MIN <= window.chars_per_token <= C.CALIBRATION_MAX
    assert window.chars_per_token > C.CALIBRATION_MAX - 0.01
    for _ in range(200):
        window.calibrate(1, 1_000_000)
    assert window.chars_per_token < C.CALIBRATION_MIN + 0.01
    before = window.chars_per_token
    window.calibrate(0, 10)
    window.calibrate(10, 0)
    assert window.chars_per_token == before


def test_known_hashes_lists_only_current_files() -> None:
    window = Window(ROOT)
    window.record_read("a.py", sha("a"), 1)
    window.record_read("b.py", sha("b"), 1)
    window.record_read("c.py", sha("c"), 1)
    window.mark_stale("b.py")
    window.mark_deleted("c.py")
    assert window.known_hashes() == {"a.py": sha("a")}


def test_the_reported_budget_follows_the_refresh_rule_past_the_delta_share() -> None:
    window = Window(ROOT)
    window.freeze()
    for version in "abc":  # three edits of one file: three copies in the deltas, one refrozen
        observe(window, "big.py", version * 40_000)
        window.refresh(1_000_000)
    max_tokens = 100_000  # 30k tokens of deltas pass a quarter of it: the next question re-freezes
    assert window.would_refreeze(max_tokens)
    assert window.next_prompt_tokens(max_tokens) == window.refrozen_tokens()
    assert window.next_prompt_tokens(max_tokens) < window.estimated_tokens()
    window.refresh(max_tokens)
    assert window.estimated_tokens() == window.refrozen_tokens()
    assert not window.would_refreeze(max_tokens)
    assert window.next_prompt_tokens(max_tokens) == window.estimated_tokens()
