"""Markdown knowledge: one file per category, stale facts marked, provenance kept, round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from live_memory.config.constants import KNOWLEDGE_CATEGORIES
from live_memory.knowledge import KnowledgeError, export_ledger, import_ledger, insights_path
from live_memory.memory.model import LedgerFact

FACTS = [
    LedgerFact(
        "Sessions are signed with the key loaded in src/auth/keys.py",
        (("src/auth/keys.py", "3f2a9c"), ("src/auth/session.py", "9b1c")),
        "architecture",
    ),
    LedgerFact("Tests need REDIS_URL set", (("tests/conftest.py", "77aa"),), "gotcha", stale=True),
    LedgerFact("Never call `time.sleep` in tests", (), "convention"),
    LedgerFact("A path with spaces is cited", (("docs/My Notes.md", ""),), "gotcha"),
    LedgerFact(
        "We chose SQLite over Redis\nbecause the queue must survive kill -9", (), "decision"
    ),
    LedgerFact("Ship the export command", (("live_memory/cli/main.py", "c0ffee"),), "task"),
    LedgerFact("The ledger is owned by the workspace actor", (), "architecture", stale=True),
]


def _by_category(facts: list[LedgerFact]) -> list[LedgerFact]:
    return sorted(facts, key=lambda fact: KNOWLEDGE_CATEGORIES.index(fact.category))


def test_export_then_import_restores_every_fact_exactly(tmp_path: Path) -> None:
    written = export_ledger(FACTS, tmp_path / "knowledge", repo_name="myrepo")

    assert [path.name for path in written] == [f"{c}.md" for c in KNOWLEDGE_CATEGORIES]
    assert import_ledger(tmp_path / "knowledge") == _by_category(FACTS)


def test_a_category_file_reads_well_and_marks_stale_facts(tmp_path: Path) -> None:
    export_ledger(FACTS, tmp_path, repo_name="myrepo")

    assert (tmp_path / "gotcha.md").read_text(encoding="utf-8") == (
        "# Gotchas — myrepo\n"
        "\n"
        '<!-- live-memory knowledge: category=gotcha repo=myrepo. One fact per "- " bullet; '
        'each "source:" line under a fact is a file it was distilled from, with the sha256 the '
        "file had then. `live-memory import` reads this file back. -->\n"
        "\n"
        "- ⚠ possibly out of date: Tests need REDIS_URL set\n"
        "  - source: `tests/conftest.py` sha256:77aa\n"
        "- A path with spaces is cited\n"
        "  - source: `docs/My Notes.md`\n"
    )


def test_empty_categories_get_a_placeholder_that_imports_as_nothing(tmp_path: Path) -> None:
    export_ledger([FACTS[2]], tmp_path, repo_name="myrepo")

    assert "_Nothing recorded yet._" in (tmp_path / "task.md").read_text(encoding="utf-8")
    assert import_ledger(tmp_path / "task.md") == []
    assert import_ledger(tmp_path) == [FACTS[2]]


def test_exporting_again_replaces_facts_the_ledger_no_longer_has(tmp_path: Path) -> None:
    export_ledger(FACTS, tmp_path, repo_name="myrepo")
    export_ledger([FACTS[0]], tmp_path, repo_name="myrepo")

    assert import_ledger(tmp_path) == [FACTS[0]]
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{c}.md" for c in KNOWLEDGE_CATEGORIES]


def test_a_hand_written_file_takes_its_category_from_its_name(tmp_path: Path) -> None:
    (tmp_path / "gotcha.md").write_text(
        "# Traps\n\nSome prose.\n\n- Port 7711 is taken by CI\n* Windows paths break globbing\n",
        encoding="utf-8",
    )
    (tmp_path / "notes.md").write_text("- Uses pykka actors\n", encoding="utf-8")

    assert import_ledger(tmp_path) == [
        LedgerFact("Port 7711 is taken by CI", (), "gotcha"),
        LedgerFact("Windows paths break globbing", (), "gotcha"),
        LedgerFact("Uses pykka actors", (), "architecture"),
    ]


def test_importing_a_missing_path_raises_knowledge_error(tmp_path: Path) -> None:
    with pytest.raises(KnowledgeError, match=r"absent\.md"):
        import_ledger(tmp_path / "absent.md")


def test_insights_live_under_root_repo_category(tmp_path: Path) -> None:
    assert insights_path(tmp_path, "myrepo", "gotcha") == tmp_path / "myrepo" / "gotcha.md"
    with pytest.raises(ValueError, match="repo name"):
        insights_path(tmp_path, "../escape", "gotcha")
    with pytest.raises(ValueError, match="category"):
        insights_path(tmp_path, "myrepo", "../gotcha")


def test_export_into_the_insights_folder_round_trips(tmp_path: Path) -> None:
    folder = insights_path(tmp_path, "myrepo", "task").parent

    export_ledger(FACTS, folder, repo_name="myrepo")

    assert import_ledger(insights_path(tmp_path, "myrepo", "task")) == [FACTS[5]]
