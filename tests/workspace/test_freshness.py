"""Memory that stays true, in the pure core: a held file's change becomes a re-read effect,
its result a delta; bursts coalesce; reads are paced; answers citing a changed file are named.
No threads: the shell's read is played by `read_batch` on real files in a temp dir."""

from __future__ import annotations

import hashlib
from pathlib import Path

from live_memory.actors.rereader import read_batch, reread_file
from live_memory.memory import Reread, Window, apply_reread
from live_memory.memory.model import LedgerFact
from live_memory.workspace import FileEvent, Persist, Question, ReadFiles, StartFork
from live_memory.workspace.citations import Citations, cited_paths
from live_memory.workspace.rereads import Rereads
from tests.workspace.support import finish, make_state, of, persist_all

SECRETS = ("*.pem", ".env")


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _held(tmp_path: Path, path: str = "src/a.py", text: str = "A = 1\n"):  # type: ignore[no-untyped-def]
    """A state whose window holds `path` (a teed write of what is on disk)."""
    state = make_state(tmp_path)
    (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / path).write_text(text)
    state.notify((FileEvent(path, "write", text),), now=0.0)
    state.window.sync_deltas()
    return state


def _read(tmp_path: Path, batch: ReadFiles) -> tuple[Reread, ...]:
    return read_batch(tmp_path, batch, max_bytes=64 * 1024, secret_patterns=SECRETS)


def test_a_change_to_a_held_file_is_re_read_and_appended_as_content(tmp_path: Path) -> None:
    state = _held(tmp_path)
    before = [t.text for t in state.window.history]
    (tmp_path / "src/a.py").write_text("A = 2\n")
    outcome = state.notify((FileEvent("src/a.py", "change"),), now=1.0)
    assert outcome.accepted == 1
    assert state.window.files["src/a.py"].content == "A = 1\n"  # nothing read on the actor
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    assert [p for p, _ in batch.paths] == ["src/a.py"] and batch.not_before == 1.0
    assert state.rereads_due(now=1.0) == []  # one batch out at a time
    assert state.reread_done(_read(tmp_path, batch), now=1.1) == []
    ctx = state.window.files["src/a.py"]
    assert (ctx.content, ctx.state, ctx.sha256) == ("A = 2\n", "current", _sha("A = 2\n"))
    assert state.window.sync_deltas()
    history = [t.text for t in state.window.history]
    assert history[: len(before)] == before  # append-only
    assert "A = 2" in history[-1] and state.rereads.counters.refreshed == 1


def test_an_echo_of_the_held_bytes_changes_nothing(tmp_path: Path) -> None:
    state = _held(tmp_path)
    state.notify((FileEvent("src/a.py", "change"),), now=1.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    state.reread_done(_read(tmp_path, batch), now=1.1)
    assert not state.window.sync_deltas()
    assert state.rereads.counters.unchanged == 1


def test_a_storm_of_changes_to_one_file_is_one_read_and_a_change_while_reading_rereads(
    tmp_path: Path,
) -> None:
    state = _held(tmp_path)
    events = tuple(FileEvent("src/a.py", "change") for _ in range(1000))
    assert state.notify(events, now=1.0).accepted == 1000
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    assert len(batch.paths) == 1
    (tmp_path / "src/a.py").write_text("A = 3\n")
    first = _read(tmp_path, batch)  # read before the next edit landed
    (tmp_path / "src/a.py").write_text("A = 4\n")
    state.notify((FileEvent("src/a.py", "change"),), now=1.2)
    (again,) = of(ReadFiles, state.reread_done(first, now=1.3))  # outdated: dropped, re-read
    assert state.window.files["src/a.py"].content == "A = 1\n"
    state.reread_done(_read(tmp_path, again), now=1.4)
    assert state.window.files["src/a.py"].content == "A = 4\n"
    counters = state.rereads.counters
    assert (counters.requested, counters.read, counters.outdated) == (1001, 2, 1)


def test_reads_are_capped_per_interval_and_paced_off_the_actor() -> None:
    rereads = Rereads(per_interval=3, interval_s=1.0, batch_max=2)
    for i in range(7):
        rereads.changed(f"f{i}.py")
    sizes, starts = [], []
    now = 10.0
    while (batch := rereads.take(now)) is not None:
        sizes.append(len(batch.paths))
        starts.append(batch.not_before)
        for path, ticket in batch.paths:
            assert rereads.accept(Reread(path, ticket, "missing"))
        rereads.batch_done()
    assert sizes == [2, 1, 2, 1, 1]
    assert starts == [10.0, 10.0, 11.0, 11.0, 12.0]  # 3 per interval, the rest wait
    assert rereads.counters.paced == 2


def test_a_tee_or_unlink_while_reading_makes_the_read_moot(tmp_path: Path) -> None:
    state = _held(tmp_path)
    (tmp_path / "src/a.py").write_text("A = 5\n")
    state.notify((FileEvent("src/a.py", "change"),), now=1.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    results = _read(tmp_path, batch)
    state.notify((FileEvent("src/a.py", "write", "A = 6\n"),), now=1.1)
    assert state.reread_done(results, now=1.2) == []
    assert state.window.files["src/a.py"].content == "A = 6\n"  # the newer tee wins


def test_secrets_are_redacted_binary_and_over_cap_files_stay_stale_and_deleted_is_deleted(
    tmp_path: Path,
) -> None:
    key = "AKIA" + "QWERTYUIOPASDFGH"
    state = _held(tmp_path, "cfg.py", "X = 1\n")
    for path, text in (("big.py", "B = 1\n"), ("bin.py", "C = 1\n"), ("gone.py", "D = 1\n")):
        (tmp_path / path).write_text(text)
        state.notify((FileEvent(path, "write", text),), now=0.5)
    (tmp_path / "cfg.py").write_text(f"AWS = '{key}'\n")
    (tmp_path / "big.py").write_text("# padding\n" * 10_000)
    (tmp_path / "bin.py").write_bytes(b"\x00\x01\x02binary")
    (tmp_path / "gone.py").unlink()
    paths = ("cfg.py", "big.py", "bin.py", "gone.py")
    state.notify(tuple(FileEvent(p, "change") for p in paths), now=1.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    state.reread_done(_read(tmp_path, batch), now=1.1)
    files = state.window.files
    assert key not in (files["cfg.py"].content or "") and "AWS" in (files["cfg.py"].content or "")
    assert (files["big.py"].state, files["big.py"].content) == ("stale", None)
    assert (files["bin.py"].state, files["bin.py"].content) == ("stale", None)
    assert files["gone.py"].state == "deleted"
    state.window.sync_deltas()
    sent = "\n".join(t.text for t in state.window.history)
    assert key not in sent and "big.py — CHANGED" in sent and "gone.py — DELETED" in sent


def test_the_reader_keeps_the_jail_and_refuses_secret_files(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.py").write_text("OUT = 1\n")
    (root / "link.py").symlink_to(tmp_path / "outside.py")
    (root / "key.pem").write_text("-----BEGIN KEY-----\n")
    for rel in ("link.py", "key.pem"):
        result = reread_file(root, rel, 1, max_bytes=1024, secret_patterns=SECRETS)
        assert result.outcome == "unreadable" and result.content is None, rel


def test_facts_citing_a_re_read_file_are_demoted(tmp_path: Path) -> None:
    state = _held(tmp_path)
    sha = state.window.files["src/a.py"].sha256
    state.window.learn([LedgerFact("A is one", (("src/a.py", sha),))])
    (tmp_path / "src/a.py").write_text("A = 2\n")
    state.notify((FileEvent("src/a.py", "change"),), now=1.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    state.reread_done(_read(tmp_path, batch), now=1.1)
    assert state.window.ledger[0].stale


def test_answers_that_read_or_named_a_changed_file_are_named_in_the_next_delta(
    tmp_path: Path,
) -> None:
    state = _held(tmp_path)
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs/b.md").write_text("# b\n")
    (start,) = of(StartFork, state.ask(Question(1, "Where is A set?", 500, 99.0), now=1.0))
    window, outcome = finish(start, "A is set in src/a.py and documented in docs/b.md.")
    persist_all(state, state.fork_done(start.fork_id, window, outcome, now=2.0))
    (start,) = of(StartFork, state.ask(Question(2, "What does b say?", 500, 99.0), now=3.0))
    window, outcome = finish(start, "It is a heading.", reads=("docs/b.md",))
    persist_all(state, state.fork_done(start.fork_id, window, outcome, now=4.0))
    (tmp_path / "src/a.py").write_text("A = 9\n")
    state.notify((FileEvent("src/a.py", "change"),), now=5.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=5.0))
    state.reread_done(_read(tmp_path, batch), now=5.1)
    (note,) = state.window.notes
    assert "src/a.py" in note and '"Where is A set?"' in note and "What does b say" not in note
    state.notify((FileEvent(str(tmp_path / "docs/b.md"), "unlink"),), now=6.0)
    assert "What does b say?" in state.window.notes[-1]
    assert "Where is A set?" in state.window.notes[-1]
    (start,) = of(StartFork, state.ask(Question(3, "Still?", 500, 99.0), now=7.0))
    delta = [t.text for t in start.window.history if t.kind == "observation"][-1]
    assert "Earlier answers that may be out of date:" in delta and "docs/b.md changed" in delta
    assert state.citations.changed("src/a.py") is None  # named once, then forgotten


def test_a_note_survives_a_refreeze_and_a_fork_commit_keeps_a_re_read(tmp_path: Path) -> None:
    state = _held(tmp_path)
    (start,) = of(StartFork, state.ask(Question(1, "Q?", 500, 99.0), now=1.0))
    (tmp_path / "src/a.py").write_text("A = 7\n")
    state.notify((FileEvent("src/a.py", "change"),), now=1.5)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.5))
    state.reread_done(_read(tmp_path, batch), now=1.6)
    window, outcome = finish(start, "see src/a.py")
    persist_all(state, state.fork_done(start.fork_id, window, outcome, now=2.0))
    assert state.window is window and window.files["src/a.py"].content == "A = 7\n"
    window.add_note("- a note")
    window.freeze()
    assert window.notes == ["- a note"]


def test_cited_paths_take_known_files_and_paths_with_a_directory() -> None:
    text = "See `src/app.py:12`, README.md, e.g. notes, ./docs/x.md and ../up/y.py."
    assert cited_paths(text, {"README.md"}, 10) == ["src/app.py", "README.md", "docs/x.md"]
    assert cited_paths(text, set(), 1) == ["src/app.py"]


def test_citations_are_bounded_and_forget_the_oldest_answer() -> None:
    citations = Citations(max_answers=2, max_paths=2, label_chars=10)
    citations.record("first question here", ["a.py", "b.py", "c.py"])
    citations.record("second", ["a.py"])
    citations.record("third", ["a.py"])
    note = citations.changed("a.py")
    assert note is not None and '"third"' in note and '"second"' in note and "first" not in note
    assert "b.py" not in citations and "c.py" not in citations


def test_citations_round_trip_the_snapshot_bounded_and_skip_what_is_malformed() -> None:
    citations = Citations()
    for i in range(5):
        citations.record(f"question {i}", [f"f{i}.py", "shared.py"])
    state = citations.to_state(limit=3)  # the snapshot keeps the most recent answers
    assert [label for label, _ in state] == ["question 2", "question 3", "question 4"]
    again = Citations(max_paths=1, label_chars=8)
    again.restore([*state, "junk", [1, ["x.py"]], ["no paths", "x.py"], ["", []]], limit=10)
    assert [a.label for a in again.answers.values()] == ["questio…", "questio…", "questio…"]
    assert all(len(a.paths) == 1 for a in again.answers.values())  # the caps hold again
    note = again.changed("f4.py")
    assert note is not None and "questio…" in note and "shared.py" not in again
    again.restore({"not": "a list"})
    assert again.answers == {} and again.by_path == {}
    restored = Citations()
    restored.restore(citations.to_state())
    assert restored.to_state() == citations.to_state()


def test_apply_reread_of_a_file_shed_meanwhile_does_not_hold_it_again() -> None:
    window = Window(root="/r")
    window.observe("a.py", "A = 1\n", _sha("A = 1\n"), 6)
    window.shed_content("a.py")
    new = Reread("a.py", 1, "content", "A = 2\n", _sha("A = 2\n"), 6)
    assert apply_reread(window, new, None)
    assert (window.files["a.py"].state, window.files["a.py"].content) == ("stale", None)
    assert not apply_reread(window, Reread("gone.py", 2, "missing"), None)


def test_a_wipe_drops_queued_reads_and_outdates_reads_out(tmp_path: Path) -> None:
    state = _held(tmp_path)
    (tmp_path / "src/a.py").write_text("A = 8\n")
    state.notify((FileEvent("src/a.py", "change"),), now=1.0)
    (batch,) = of(ReadFiles, state.rereads_due(now=1.0))
    state.wipe(now=1.1)
    assert state.reread_done(_read(tmp_path, batch), now=1.2) == []
    assert "src/a.py" not in state.window.files
    assert not of(Persist, state.rereads_due(now=1.3))
