"""The knowledge ledger: parsing, attribution, demotion, revalidation, de-duplication, rendering."""

from __future__ import annotations

import random
import time

from live_memory.memory.ledger import (
    LEDGER_HEADING,
    STALE_LEDGER_HEADING,
    DuplicateIndex,
    attribute_facts,
    demote_facts,
    is_duplicate_fact,
    merge_facts,
    parse_fact_lines,
    render_ledger,
    revalidate_facts,
)
from live_memory.memory.model import LedgerFact

KNOWN = {
    "src/auth/session.ts": "h-session",
    "api/middleware.ts": "h-mw",
    "app.py": "h-app",
    "docs/app.py": "h-docs-app",
    "a.c": "h-ac",
}


# --- parsing -------------------------------------------------------------------------------
def test_parse_strips_bullets_and_numbering_and_skips_headings_and_blanks() -> None:
    text = "\n".join(
        [
            "## Accumulated knowledge",
            "- Auth lives in src/auth/*",
            "  * SessionManager issues tokens",
            "• Config is layered",
            "1. Tests mirror the source tree",
            "2) Snapshots are atomic",
            "",
            "   ",
            "Plain line without bullet",
        ]
    )
    assert parse_fact_lines(text) == [
        ("architecture", "Auth lives in src/auth/*"),
        ("architecture", "SessionManager issues tokens"),
        ("architecture", "Config is layered"),
        ("architecture", "Tests mirror the source tree"),
        ("architecture", "Snapshots are atomic"),
        ("architecture", "Plain line without bullet"),
    ]


def test_parse_reads_categories_case_insensitively_and_defaults_to_architecture() -> None:
    text = "- [Gotcha] never call close twice\n[convention] snake_case modules\n- [misc] kept as is"
    assert parse_fact_lines(text) == [
        ("gotcha", "never call close twice"),
        ("convention", "snake_case modules"),
        ("architecture", "[misc] kept as is"),
    ]


def test_parse_drops_a_category_tag_with_no_fact() -> None:
    assert parse_fact_lines("- [decision]   \n- -") == [("architecture", "-")]


def test_parse_does_not_treat_emphasis_as_a_bullet() -> None:
    assert parse_fact_lines("**Bold** claim") == [("architecture", "**Bold** claim")]


# --- attribution ---------------------------------------------------------------------------
def sources_of(text: str) -> dict[str, str]:
    (fact,) = attribute_facts([("architecture", text)], KNOWN)
    return dict(fact.sources)


def test_facts_are_attributed_by_full_relative_path() -> None:
    assert sources_of("SessionManager (src/auth/session.ts) issues tokens") == {
        "src/auth/session.ts": "h-session"
    }


def test_facts_are_attributed_by_basename_to_every_file_of_that_name() -> None:
    assert sources_of("Tokens are checked in middleware.ts.") == {"api/middleware.ts": "h-mw"}
    assert sources_of("The CLI entry point is app.py") == {
        "app.py": "h-app",
        "docs/app.py": "h-docs-app",
    }


def test_names_may_carry_a_dot_slash_prefix_or_sit_in_punctuation() -> None:
    assert sources_of("run ./app.py to start") == {"app.py": "h-app", "docs/app.py": "h-docs-app"}
    assert sources_of("see ./docs/app.py") == {"docs/app.py": "h-docs-app"}
    assert sources_of("(`src/auth/session.ts`:42)") == {"src/auth/session.ts": "h-session"}


def test_a_full_path_names_only_that_file_not_its_basename_twins() -> None:
    assert sources_of("See docs/app.py for the example") == {"docs/app.py": "h-docs-app"}


def test_names_inside_other_words_or_paths_are_not_attributed() -> None:
    assert sources_of("webapp.py starts the server") == {}
    assert sources_of("the file app.pyc is generated") == {}
    assert sources_of("lib/app.py is vendored") == {}
    assert sources_of("my-app.py is a script") == {}
    assert sources_of("old_app.py was removed") == {}


def test_very_short_basenames_are_not_attributed_by_name_alone() -> None:
    assert sources_of("a.c compiles the runtime") == {"a.c": "h-ac"}  # full path still counts
    assert sources_of("see lib/a.c") == {}


def test_facts_naming_no_known_file_get_no_sources_and_keep_their_category() -> None:
    (fact,) = attribute_facts([("convention", "Modules are singular nouns")], KNOWN)
    assert fact == LedgerFact("Modules are singular nouns", (), "convention", False)


def test_attribution_records_the_hash_at_distillation_time_in_a_stable_order() -> None:
    (fact,) = attribute_facts(
        [("architecture", "api/middleware.ts consumes src/auth/session.ts")], KNOWN
    )
    assert fact.sources == (("api/middleware.ts", "h-mw"), ("src/auth/session.ts", "h-session"))


# --- freshness -----------------------------------------------------------------------------
def test_demote_marks_only_facts_citing_the_path_and_counts_new_demotions() -> None:
    facts = [
        LedgerFact("a", (("x.py", "1"),)),
        LedgerFact("b", (("y.py", "2"),)),
        LedgerFact("c", (("x.py", "1"), ("y.py", "2")), stale=True),
        LedgerFact("d"),
    ]
    out, demoted = demote_facts(facts, "x.py")
    assert [f.stale for f in out] == [True, False, True, False]
    assert demoted == 1
    again, demoted_again = demote_facts(out, "x.py")
    assert again == out and demoted_again == 0


def test_revalidate_demotes_facts_whose_sources_changed_or_vanished() -> None:
    facts = [
        LedgerFact("same", (("a.py", "h1"),)),
        LedgerFact("changed", (("a.py", "h1"), ("b.py", "old"))),
        LedgerFact("gone", (("c.py", "h3"),)),
        LedgerFact("uncited"),
    ]
    out = revalidate_facts(facts, {"a.py": "h1", "b.py": "new", "c.py": None})
    assert [f.stale for f in out] == [False, True, True, False]
    assert [f.text for f in out] == ["same", "changed", "gone", "uncited"]


def test_revalidate_treats_an_unlisted_source_as_changed() -> None:
    (fact,) = revalidate_facts([LedgerFact("t", (("a.py", "h"),))], {})
    assert fact.stale is True


# --- duplicates ----------------------------------------------------------------------------
def test_seventy_percent_word_overlap_is_a_duplicate() -> None:
    existing = [LedgerFact("Auth lives in src auth and issues session tokens")]
    # 7 of 10 words shared: a duplicate; 6 of 10: not.
    assert is_duplicate_fact("auth lives in src auth and issues one two three four", existing)
    assert is_duplicate_fact("Auth lives in src and issues w1 w2 w3", existing)
    assert not is_duplicate_fact("Auth lives in src and w1 w2 w3 w4", existing)


def test_overlap_is_measured_against_the_shorter_fact_and_ignores_case_and_punctuation() -> None:
    existing = [LedgerFact("Config: layered (env > file > defaults), validated once.")]
    assert is_duplicate_fact("CONFIG IS LAYERED", existing) is False  # 'is' is new: 2/3
    assert is_duplicate_fact("config layered", existing) is True


def test_empty_candidates_are_duplicates_and_an_empty_ledger_has_none() -> None:
    assert is_duplicate_fact("  -- ", [LedgerFact("x")]) is True
    assert is_duplicate_fact("something new", []) is False


def test_merge_appends_only_non_duplicates_in_order() -> None:
    existing = [LedgerFact("auth lives in src auth")]
    merged = merge_facts(
        existing,
        [
            LedgerFact("Auth lives in src/auth"),
            LedgerFact("Snapshots are written atomically"),
            LedgerFact("snapshots are written atomically by the store"),
        ],
    )
    assert [f.text for f in merged] == [
        "auth lives in src auth",
        "Snapshots are written atomically",
    ]


# --- rendering -----------------------------------------------------------------------------
def _naive_merge(existing: list[LedgerFact], new: list[LedgerFact]) -> list[LedgerFact]:
    merged = list(existing)
    for fact in new:
        if not is_duplicate_fact(fact.text, merged):
            merged.append(fact)
    return merged


def _random_facts(rng: random.Random, count: int, vocabulary: int) -> list[LedgerFact]:
    words = [f"w{i}" + "x" * (i % 7) for i in range(vocabulary)]
    return [
        LedgerFact(" ".join(rng.choices(words, k=rng.randint(0, 9))), (), "architecture")
        for _ in range(count)
    ]


def test_the_indexed_merge_keeps_exactly_what_the_pairwise_check_keeps() -> None:
    rng = random.Random(1234)
    for vocabulary in (6, 15, 40, 400):  # small vocabularies: many near-duplicates
        existing = _random_facts(rng, 60, vocabulary)
        new = _random_facts(rng, 300, vocabulary)
        assert merge_facts(existing, new) == _naive_merge(existing, new), vocabulary


def test_the_indexed_merge_is_exact_with_facts_naming_identifiers_and_paths() -> None:
    rng = random.Random(99)
    names = ["parse_row", "load_cfg", "src/a.py", "src/b.py", "RowParser", "x_y"]
    words = ["the", "calls", "reads", "writes", "module", "row", "file", "quickly"]
    for share in (0.0, 0.3, 0.7):
        facts = [
            LedgerFact(
                " ".join(
                    [*rng.choices(words, k=rng.randint(1, 6))]
                    + [rng.choice(names) for _ in range(rng.random() < share)]
                )
            )
            for _ in range(360)
        ]
        assert merge_facts(facts[:60], facts[60:]) == _naive_merge(facts[:60], facts[60:]), share


def test_facts_of_one_shape_about_different_functions_are_compared_by_subject() -> None:
    """2,000 facts sharing their wording ("Function ... parses ...") but each naming its own
    function and path: each is compared with the few facts of its subject, not every one."""
    facts = [
        f"Function handle_record_{i:04d} in src/mod_{i:04d}/handler.py parses "
        f"RecordType{i:04d} records."
        for i in range(2_000)
    ]
    index = DuplicateIndex([])
    for text in facts:
        assert not index.is_duplicate(text)
        index.add(text)
    assert index.comparisons < len(facts), index.comparisons  # was ~2 million
    assert index.is_duplicate(facts[42].replace("records.", "records!"))


def test_merge_stops_at_the_ledger_cap() -> None:
    facts = [LedgerFact(f"fact number{i} about module{i}", (), "architecture") for i in range(9)]
    merged = merge_facts(facts[:3], facts[3:], max_facts=5)
    assert merged == facts[:5]
    assert merge_facts(facts[:6], facts[6:], max_facts=5) == facts[:6]  # never shrinks


def _distinct_facts(count: int) -> list[LedgerFact]:
    rng = random.Random(count)
    vocabulary = [f"{rng.getrandbits(40):x}" for _ in range(20_000)]
    common = ["the", "module", "calls", "and", "src", "py"]  # shared by every fact
    return [
        LedgerFact(" ".join(common + rng.sample(vocabulary, 8)), (), "architecture")
        for _ in range(count)
    ]


def test_merging_thousands_of_facts_costs_linear_comparisons_not_quadratic() -> None:
    """All distinct (the worst case for a duplicate check), sharing six common words."""
    facts = _distinct_facts(4_000)
    index = DuplicateIndex([])
    started = time.thread_time()  # this thread's CPU time: the work, not the machine's load
    for fact in facts:
        assert not index.is_duplicate(fact.text)
        index.add(fact.text)
    elapsed = time.thread_time() - started
    # Only facts sharing a rare word are compared (~4.5 each here); pairwise: 8 million.
    assert index.comparisons < 10 * len(facts), index.comparisons
    assert elapsed < 10.0, elapsed  # generous (shared machine); pairwise took ~25 s for 3,000
    assert len(merge_facts([], facts)) == len(facts)


def test_render_of_an_empty_ledger_says_so_under_the_heading() -> None:
    assert render_ledger([]) == f"{LEDGER_HEADING}\n(empty: nothing distilled yet)"


def test_render_puts_demoted_facts_under_the_stale_heading() -> None:
    text = render_ledger(
        [LedgerFact("fresh one"), LedgerFact("old one", stale=True), LedgerFact("fresh two")]
    )
    assert text == "\n".join(
        [LEDGER_HEADING, "- fresh one", "- fresh two", "", STALE_LEDGER_HEADING, "- old one"]
    )


def test_render_with_only_stale_facts_keeps_both_headings() -> None:
    text = render_ledger([LedgerFact("old", stale=True)])
    assert text.startswith(f"{LEDGER_HEADING}\n(empty: nothing distilled yet)\n\n")
    assert text.endswith(f"{STALE_LEDGER_HEADING}\n- old")


def test_rendered_ledger_parses_back_to_the_same_facts() -> None:
    facts = [LedgerFact("one fact"), LedgerFact("two fact", stale=True)]
    assert [t for _, t in parse_fact_lines(render_ledger(facts))] == ["one fact", "two fact"]
