"""Model-based test of memory that stays true: random interleavings of external edits (single
and in bursts, racing the re-read), teed writes, deletions, the shell's re-reads, questions
whose answers read and name files, compactions and wipes, over real files in a temp dir.

After every step: the re-read bounds hold, notify/re-read never rewrite the prompt (append
only), no secret reaches the prompt, nothing over the cap is held; once quiet (no fork, no
re-read queued or out) every file the window calls current has the bytes on disk; and every
change to a file an adopted answer read or named brings a note naming that answer.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import re
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from live_memory.actors.rereader import read_batch
from live_memory.agent.loop import LoopResult
from live_memory.agent.question import QuestionOutcome
from live_memory.config import constants as C
from live_memory.hygiene import redact_secrets
from live_memory.memory import Ingestor
from live_memory.providers.types import Usage
from live_memory.tools.outcome import FileRead
from live_memory.workspace import (
    Effect,
    FileEvent,
    Persist,
    Question,
    ReadFiles,
    StartFork,
    WorkspaceState,
)
from tests.workspace.support import LIMITS

PATHS = ("a.py", "src/b.py", "docs/c.md")
MAX_FILE_BYTES = 64
SECRET = "AKIA" + "QWERTYUIOPASDFGH"
TEXTS = ("x = 1\n", "x = 2\n", "y = 'two'\n", f"KEY = '{SECRET}'\n", "z" * 100 + "\n", "")
_NOTE = re.compile(r"^- (\S+) changed after you answered (.*); those answers")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class FreshnessMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="lm-fresh-machine-"))
        for path in PATHS:
            (self.root / path).parent.mkdir(parents=True, exist_ok=True)
        ingestor = Ingestor(self.root, max_file_bytes=MAX_FILE_BYTES, max_held_bytes=40)
        self.state = WorkspaceState(str(self.root), ingestor, LIMITS, 0.0)
        self.state.window.freeze()
        self.now = 0.0
        self.out: list[ReadFiles] = []
        self.forks: dict[int, StartFork] = {}
        self.slots = itertools.count(1)
        self.cited: dict[str, set[str]] = {}
        """The model of Citations: path -> questions of adopted answers that read or named it."""
        self.notes_made = 0

    def teardown(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    # --- carrying out effects like the shell -------------------------------------------
    def run(self, effects: list[Effect]) -> None:
        queue = list(effects)
        while queue:
            effect = queue.pop(0)
            if isinstance(effect, Persist):
                queue += self.state.persisted(effect.ticket, None)
            elif isinstance(effect, ReadFiles):
                assert not self.out, "one batch out at a time"
                assert 0 < len(effect.paths) <= C.REREAD_BATCH_MAX
                self.out.append(effect)
            elif isinstance(effect, StartFork):
                self.forks[effect.fork_id] = effect

    def _disk(self, path: str) -> bytes | None:
        try:
            return (self.root / path).read_bytes()
        except FileNotFoundError:
            return None

    def _step(self, action: object, *, same_window: bool = True) -> None:
        """Run `action` (a callable); check it left the prompt append-only and named the
        answers citing every file it moved on (a commit only adopts notes made before)."""
        window = self.state.window
        before = {p: (f.sha256, f.state) for p, f in window.files.items()}
        frozen, history, notes = window.frozen, list(window.history), list(window.notes)
        action()  # type: ignore[operator]
        after = self.state.window
        if not same_window:
            return
        assert after is window and after.frozen == frozen
        assert list(after.history) == history  # news waits in the pending delta
        assert after.notes[: len(notes)] == notes
        for line in after.notes[len(notes) :]:
            self._account_note(line)
        for path, (sha, state) in before.items():
            ctx = after.files.get(path)
            moved = ctx is None or (ctx.sha256, ctx.state) != (sha, state)
            if moved and self.cited.get(path):
                raise AssertionError(f"{path} moved on, but no note named {self.cited[path]}")

    def _account_note(self, line: str) -> None:
        match = _NOTE.match(line)
        assert match is not None, line
        path, named = match.group(1), match.group(2)
        expected = self.cited.pop(path, set())
        assert expected, f"a note for {path}, which no adopted answer cited"
        shown = [q for q in expected if f'"{q}"' in named]
        assert len(shown) == min(len(expected), C.CITED_ANSWERS_PER_NOTE), (line, expected)
        self.notes_made += 1

    # --- rules ---------------------------------------------------------------------------
    @rule(path=st.sampled_from(PATHS), text=st.sampled_from(TEXTS))
    def tee(self, path: str, text: str) -> None:
        """The coding agent wrote the file (the hook tees its content)."""
        (self.root / path).write_text(text)
        self._step(lambda: self.state.notify((FileEvent(path, "write", text),), self.now))

    @rule(path=st.sampled_from(PATHS), texts=st.lists(st.sampled_from(TEXTS), min_size=1))
    def external_edits(self, path: str, texts: list[str]) -> None:
        """Edits outside any agent; one change event each (a hook or the watcher)."""
        for text in texts:
            (self.root / path).write_text(text)
            event = FileEvent(str(self.root / path), "change")
            self._step(lambda e=event: self.state.notify((e,), self.now))  # type: ignore[misc]
        self._step(lambda: self.run(self.state.rereads_due(self.now)))

    @rule(path=st.sampled_from(PATHS), text=st.sampled_from(TEXTS))
    def edit_and_let_the_shell_read(self, path: str, text: str) -> None:
        """The common case: one external edit, its re-read done before anything else."""
        self.external_edits(path, [text])
        if self.out:
            self.shell_reads(None)

    @rule(path=st.sampled_from(PATHS))
    def delete(self, path: str) -> None:
        (self.root / path).unlink(missing_ok=True)
        self._step(lambda: self.state.notify((FileEvent(path, "unlink"),), self.now))

    @precondition(lambda self: self.out)
    @rule(race=st.one_of(st.none(), st.tuples(st.sampled_from(PATHS), st.sampled_from(TEXTS))))
    def shell_reads(self, race: tuple[str, str] | None) -> None:
        """The shell reads the batch out; optionally an edit lands after the read."""
        batch = self.out.pop()
        results = read_batch(self.root, batch, max_bytes=MAX_FILE_BYTES, secret_patterns=())
        if race is not None:
            self.now += 0.01
            self.external_edits(race[0], [race[1]])
        self._step(lambda: self.run(self.state.reread_done(results, self.now)))
        counters = self.state.rereads.counters
        event(f"re-reads: refreshed={counters.refreshed > 0} stale={counters.kept_stale > 0}")
        event(f"outdated by a race: {counters.outdated > 0}; notes: {self.notes_made > 0}")

    @rule(seconds=st.sampled_from([0.1, 1.0, 5.0]))
    def time_passes(self, seconds: float) -> None:
        self.now += seconds
        self._step(lambda: self.run(self.state.rereads_due(self.now)))

    @precondition(lambda self: len(self.state.in_flight) < LIMITS.concurrency)
    @rule(text=st.sampled_from(["where is x?", "what is y?"]))
    def ask(self, text: str) -> None:
        question = Question(next(self.slots), f"{text} #{len(self.forks)}", 500, self.now + 60)
        self.run(self.state.ask(question, self.now))

    @precondition(lambda self: self.forks)
    @rule(
        data=st.data(),
        reads=st.lists(st.sampled_from(PATHS), max_size=2, unique=True),
        named=st.lists(st.sampled_from(PATHS), max_size=2, unique=True),
        compact=st.booleans(),
    )
    def finish_fork(
        self, data: st.DataObject, reads: list[str], named: list[str], compact: bool
    ) -> None:
        fork_id = data.draw(st.sampled_from(sorted(self.forks)))
        start = self.forks.pop(fork_id)
        window = start.window
        if compact:  # a compaction re-freezes the fork's window
            window.freeze()
        present = [(p, d) for p in reads if (d := self._disk(p)) is not None]
        files = [FileRead(p, _sha(d), len(d)) for p, d in present]
        for read in files:
            window.record_read(read.path, read.sha256, read.size)
        answer = "See " + ", ".join(named) + "." if named else "No file needed."
        window.append_qa(start.question, answer)
        loop = LoopResult(answer=answer, usage=Usage(10, 1), reads=files, model="fake")
        outcome = QuestionOutcome(window, loop, answer, "[t]", 0.1, 0.0, 1.0, compact, Usage())
        effects = self.state.fork_done(fork_id, window, outcome, self.now)
        if self.state.window is window:  # adopted: its answer is tracked from now on
            # A bare file name counts as cited when the window knows it; a path with a
            # directory always does.
            named = [p for p in named if "/" in p or p in window.files]
            for path in dict.fromkeys([*(r.path for r in files), *named]):
                self.cited.setdefault(path, set()).add(start.question)
        self._step(lambda: self.run(effects), same_window=False)

    @rule()
    def wipe(self) -> None:
        self.state.wipe(self.now)
        self.state.window.freeze()
        self.cited.clear()
        self.forks.clear()  # their commits would be dropped by the commit rule anyway
        self.state.in_flight.clear()

    # --- invariants --------------------------------------------------------------------
    @invariant()
    def re_reads_stay_bounded(self) -> None:
        rereads = self.state.rereads
        assert len(rereads.out) <= C.REREAD_BATCH_MAX
        assert set(rereads.queued) <= set(PATHS) and set(rereads.out) <= set(PATHS)
        assert rereads.batch_out == bool(self.out)

    @invariant()
    def no_secret_and_nothing_over_the_cap_is_held_or_sent(self) -> None:
        window = self.state.window
        sent = window.copy()
        sent.sync_deltas()
        text = (sent.frozen or "") + "".join(t.text for t in sent.history)
        assert SECRET not in text
        for ctx in window.files.values():
            if ctx.content is not None:
                assert len(ctx.content.encode()) <= MAX_FILE_BYTES

    @invariant()
    def once_quiet_what_the_window_calls_current_is_on_disk(self) -> None:
        state = self.state
        if state.in_flight or len(state.rereads) or self.out:
            return
        for path, ctx in state.window.files.items():
            disk = self._disk(path)
            if disk is None:
                assert ctx.state == "deleted", (path, ctx)
            elif ctx.state == "current":
                assert ctx.sha256 == _sha(disk), (path, ctx, disk)
                if ctx.content is not None:
                    assert ctx.content == redact_secrets(disk.decode())[0]


FreshnessMachine.TestCase.settings = settings(
    max_examples=int(os.environ.get("LM_FRESH_EXAMPLES", "300")),
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
TestFreshnessMachine = FreshnessMachine.TestCase
pytestmark = pytest.mark.timeout(600)
