"""What makes two facts the same fact: identifiers and paths named, normalised text."""

from __future__ import annotations

from functools import partial

from live_memory.config import constants as C
from live_memory.knowledge import FactRow, decide
from live_memory.memory import (
    LedgerFact,
    fact_identifiers,
    fact_signature,
    fact_words,
    normalise_fact,
    query_terms,
)
from live_memory.memory.fact_keys import MAX_TEXT_IDENTIFIERS
from live_memory.memory.ledger import merge_facts
from tests.support.linearity import ADVERSARIAL_UNITS, assert_linear, cpu_seconds


def _shape(i: int) -> str:
    return (
        f"Function handle_record_{i:04d} in src/mod_{i:04d}/handler.py parses "
        f"RecordType{i:04d} records."
    )


def test_identifiers_are_code_shaped_tokens_paths_and_calls_not_words_or_numbers() -> None:
    text = (
        "SessionManager (src/auth/session.ts) issues tokens via issue() and `make token`; "
        "MAX_RETRIES is 3, e.g. for utf8 HTTPServer."
    )
    assert fact_identifiers(text) == [
        "SessionManager",
        "src/auth/session.ts",
        "make token",
        "MAX_RETRIES",
        "utf8",
        "HTTPServer",
        "issue",
    ]
    assert fact_identifiers("Auth is simple and fast, 3 times.") == []


def test_facts_of_one_shape_about_different_symbols_have_different_signatures() -> None:
    signatures = {fact_signature(_shape(i)) for i in range(2000)}
    assert len(signatures) == 2000
    # The window ledger's duplicate test keeps them apart too (word overlap alone kept few
    # of them: the 2,000 -> 296); a repeat of one is still a duplicate.
    kept = merge_facts([], [LedgerFact(_shape(i)) for i in range(2000)])
    assert len(kept) == 2000
    assert len(merge_facts(kept, [LedgerFact(_shape(7).upper())])) == 2000


def test_normalising_ignores_case_spacing_and_the_final_full_stop() -> None:
    assert normalise_fact("  The  cache lives in cache.py. ") == "the cache lives in cache.py"


def test_decide_confirms_supersedes_or_adds() -> None:
    old = FactRow(1, LedgerFact("MAX_RETRIES in config.py is 3."), 0.0, 0.0)
    other = FactRow(2, LedgerFact("MAX_RETRIES in client.py is 3."), 0.0, 0.0)
    assert decide(LedgerFact("MAX_RETRIES in config.py is 3"), [old, other]) == ("confirm", old)
    assert decide(LedgerFact("max_retries  in config.py is 3"), [other, old]) == ("confirm", old)
    assert decide(LedgerFact("MAX_RETRIES in config.py is 5."), [old, other]) == (
        "supersede",
        old,
    )
    # Same identifiers, a different statement about them: a second fact, not an update.
    assert decide(LedgerFact("MAX_RETRIES in config.py is read once at start-up"), [old])[0] == (
        "new"
    )


def test_query_terms_put_a_questions_identifiers_first_without_filler() -> None:
    assert query_terms("Where is handle_record_0042 defined, and what does it parse?") == [
        "handle_record_0042",
        "parse",
    ]
    assert query_terms("What is in src/mod_0042/handler.py?")[:3] == ["src", "mod_0042", "handler"]
    assert query_terms("what is it?") == []


def test_key_extraction_is_linear_on_one_long_token() -> None:
    # One 20 KB token held the interpreter lock 7.6 s in query_terms (quadratic patterns).
    for function in (fact_identifiers, fact_signature, query_terms, normalise_fact, fact_words):
        assert_linear(function)


def test_key_extraction_of_100_kb_costs_at_most_a_bounded_multiple_of_10_kb() -> None:
    for unit in ADVERSARIAL_UNITS:
        small, large = (unit * 10_000)[:10_000], (unit * 100_000)[:100_000]
        for function in (fact_signature, query_terms):
            bound = 20 * max(cpu_seconds(partial(function, small)), 1e-4)
            assert cpu_seconds(partial(function, large)) <= bound, (unit, function)


def test_keys_come_from_a_bounded_prefix_and_are_bounded_in_number_and_length() -> None:
    name = "n" * (C.MAX_IDENTIFIER_CHARS - 2) + "_x"
    assert fact_identifiers(f"{name} and {name}x and `{name}x` and {name}x(1)") == [name]
    many = " ".join(f"handle_record_{i}" for i in range(5_000))
    assert len(fact_identifiers(many)) == MAX_TEXT_IDENTIFIERS
    assert len(query_terms(many)) <= 32
    late = "word " * (C.MAX_KEY_SCAN_CHARS // 5) + "parse_config"
    assert fact_identifiers(late) == [] and "parse_config" not in query_terms(late)
    # A token the scan cap cuts in two is not taken as a shorter name.
    cut = "x " * (C.MAX_KEY_SCAN_CHARS // 2 - 3) + "parse_config_value"
    assert fact_identifiers(cut) == []
