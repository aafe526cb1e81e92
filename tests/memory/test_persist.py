"""Window <-> snapshot state: what survives a restart, what is re-validated, what never leaves."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from live_memory.memory.model import LedgerFact, Turn
from live_memory.memory.persist import window_from_state, window_to_state
from live_memory.memory.window import Window
from tests.support.repo import git, make_repo


def digest_on_disk(root: Path) -> Callable[[str], str | None]:
    def current_hash(rel: str) -> str | None:
        try:
            return hashlib.sha256((root / rel).read_bytes()).hexdigest()
        except OSError:
            return None

    return current_hash


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


FILES = {
    "src/parser.py": "def parse(): ...\n",
    "src/render.py": "def render(): ...\n",
    "docs/guide.md": "# Guide\nsecret sauce\n",
}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(tmp_path_factory.mktemp("template") / "repo", FILES)


@pytest.fixture
def root(template: Path, tmp_path: Path) -> Path:
    """A private copy of one committed repository (cheaper than running git per test)."""
    return Path(shutil.copytree(template, tmp_path / "repo", symlinks=True)).resolve()


def learned_window(root: Path) -> Window:
    window = Window(str(root), tree="src/")
    window.freeze()
    window.record_read("src/parser.py", sha(FILES["src/parser.py"]), 17)
    window.observe("src/render.py", FILES["src/render.py"], sha(FILES["src/render.py"]), 18)
    window.observe(
        "docs/guide.md", FILES["docs/guide.md"], sha(FILES["docs/guide.md"]), 22, source="preloaded"
    )
    window.ledger = [
        LedgerFact(
            "parse() lives in src/parser.py", (("src/parser.py", sha(FILES["src/parser.py"])),)
        ),
        LedgerFact(
            "render.py renders", (("src/render.py", sha(FILES["src/render.py"])),), "convention"
        ),
        LedgerFact("tabs, not spaces", (), "gotcha"),
    ]
    window.append_qa("where is parse?", "src/parser.py")
    window.sync_deltas()  # an observation delta sits in the history now
    window.append_qa("and render?", "src/render.py")
    window.compactions, window.summaries_written, window.last_compaction_at = 2, 3, 1700000000.5
    window.chars_per_token = 3.5
    return window


def reload(root: Path, window: Window) -> Window:
    state = json.loads(json.dumps(window_to_state(window)))  # must survive a JSON round trip
    return window_from_state(str(root), state, digest_on_disk(root))


def test_round_trip_keeps_history_manifest_ledger_and_counters(root: Path) -> None:
    window = learned_window(root)
    restored = reload(root, window)
    assert restored.root == str(root)
    assert restored.history == [
        Turn("user", "question", "where is parse?"),
        Turn("assistant", "answer", "src/parser.py"),
        Turn("user", "question", "and render?"),
        Turn("assistant", "answer", "src/render.py"),
    ]
    assert set(restored.files) == set(FILES)
    assert {p: f.sha256 for p, f in restored.files.items()} == {p: sha(t) for p, t in FILES.items()}
    assert all(f.source == "read" and f.state == "current" for f in restored.files.values())
    assert restored.ledger == window.ledger
    assert (restored.compactions, restored.summaries_written) == (2, 3)
    assert restored.last_compaction_at == 1700000000.5
    assert restored.chars_per_token == 3.5
    assert restored.frozen is None  # the caller re-preloads, then freezes


def test_raw_content_and_observation_turns_are_never_persisted(root: Path) -> None:
    window = learned_window(root)
    assert any(t.kind == "observation" for t in window.history)
    text = json.dumps(window_to_state(window))
    state = json.loads(text)
    assert "secret sauce" not in text
    assert "def render(): ..." not in text
    assert "[workspace update" not in text and "[end of workspace update]" not in text
    assert all(set(item) == {"path", "sha256", "size", "state"} for item in state["files"])
    restored = reload(root, window)
    assert all(f.content is None for f in restored.files.values())
    assert restored.counts()["with_content"] == 0


def test_a_file_changed_on_disk_leaves_the_manifest_and_its_facts_come_back_stale(
    root: Path,
) -> None:
    window = learned_window(root)
    (root / "src/parser.py").write_text("def parse(strict=True): ...\n", encoding="utf-8")
    restored = reload(root, window)
    assert "src/parser.py" not in restored.files
    assert {"src/render.py", "docs/guide.md"} <= set(restored.files)
    stale = {f.text: f.stale for f in restored.ledger}
    assert stale == {
        "parse() lives in src/parser.py": True,
        "render.py renders": False,
        "tabs, not spaces": False,
    }


def test_a_deleted_file_leaves_the_manifest_and_demotes_what_cites_it(root: Path) -> None:
    window = learned_window(root)
    git(root, "rm", "-q", "src/render.py")
    restored = reload(root, window)
    assert "src/render.py" not in restored.files
    assert [f.stale for f in restored.ledger] == [False, True, False]


def test_a_fact_citing_a_file_outside_the_manifest_is_still_revalidated(root: Path) -> None:
    window = Window(str(root))
    window.ledger = [
        LedgerFact("guide", (("docs/guide.md", sha(FILES["docs/guide.md"])),)),
        LedgerFact("old guide", (("docs/guide.md", sha("an older version")),)),
    ]
    restored = reload(root, window)
    assert [f.stale for f in restored.ledger] == [False, True]


def test_stale_and_deleted_entries_are_not_persisted(root: Path) -> None:
    window = learned_window(root)
    window.mark_stale("src/parser.py")
    window.mark_deleted("src/render.py")
    state = json.loads(json.dumps(window_to_state(window)))
    assert [f["path"] for f in state["files"]] == ["docs/guide.md"]
    restored = reload(root, window)
    assert set(restored.files) == {"docs/guide.md"}
    assert [f.stale for f in restored.ledger] == [True, True, False]  # demoted, and persisted so


def test_restored_files_get_a_fresh_lru_order_and_clock(root: Path) -> None:
    restored = reload(root, learned_window(root))
    uses = sorted(f.last_used for f in restored.files.values())
    assert uses == list(range(len(restored.files)))
    assert restored.clock == len(restored.files)
    restored.record_read("src/new.py", sha("n"), 1)
    assert restored.files["src/new.py"].last_used > max(uses)


def test_an_empty_state_restores_an_empty_window(tmp_path: Path) -> None:
    window = window_from_state(str(tmp_path), {}, digest_on_disk(tmp_path))
    assert (window.history, window.files, window.ledger) == ([], {}, [])
    assert window.last_compaction_at is None


@pytest.mark.parametrize(
    "state",
    [
        {"history": [{"role": "user", "text": "no kind"}]},
        {"files": [{"path": "a.py"}]},
        {"ledger": [{"sources": []}]},
        {"files": [{"path": "a.py", "sha256": "x", "size": "big"}]},
        {"chars_per_token": "four"},
        {"history": 3},
    ],
)
def test_a_malformed_state_raises_one_of_the_errors_the_caller_quarantines(
    tmp_path: Path, state: dict[str, object]
) -> None:
    (tmp_path / "a.py").write_text("x", encoding="utf-8")

    def current_hash(rel: str) -> str | None:
        return "x"

    with pytest.raises((KeyError, TypeError, ValueError)):
        window_from_state(str(tmp_path), state, current_hash)
