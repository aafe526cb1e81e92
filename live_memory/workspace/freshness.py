"""WorkspaceState's events for memory that stays true (a mixin, kept apart from state.py).

A change to a file whose content the window holds is claimed here instead of merely marking
it stale: the path is queued for the server's own re-read (`Rereads`, the `ReadFiles`
effect), and the shell reports back with `reread_done`, which folds the new content into the
window as an ordinary delta. Whenever a file moves on (a re-read with new bytes, a teed write,
a change marked stale, an unlink), the answers that read or named it are named in a note of
the next delta (`Citations`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from live_memory.memory import FileContext, Ingestor, Reread, Window, apply_reread
from live_memory.workspace.citations import Citations, Note, cited_paths
from live_memory.workspace.effects import Effect
from live_memory.workspace.notify_log import NotifyLog
from live_memory.workspace.records import FileEvent
from live_memory.workspace.rereads import Rereads

__all__ = ["FreshnessEvents"]

_REREAD_KINDS = ("change", "add")
_CHANGE_KINDS = ("write", "change", "add", "unlink", "modified")


class FreshnessEvents:
    __slots__ = ("citations", "rereads")

    window: Window
    ingestor: Ingestor
    notify_log: NotifyLog
    rereads: Rereads
    citations: Citations

    @property
    def _forks_running(self) -> bool:
        raise NotImplementedError

    def _changed(self, now: float) -> None:
        raise NotImplementedError

    def _init_freshness(self) -> None:
        self.rereads = Rereads()
        self.citations = Citations()

    # --- from notify -------------------------------------------------------------------
    def _claim(self, event: FileEvent) -> tuple[str | None, FileContext | None, bool]:
        """(relative path, the window's entry before, claimed): a change to a held file is
        claimed for a re-read; any other news of a queued path makes its re-read moot."""
        rel = self.ingestor.relative(event.path)
        if rel is None:
            return None, None, False
        before = self.window.files.get(rel)
        if event.kind in _REREAD_KINDS:
            held = before is not None and before.content is not None
            if held or rel in self.rereads.out or rel in self.rereads.queued:
                self.rereads.changed(rel)
                return rel, before, True
        elif event.kind != "read" or event.content is not None:
            self.rereads.touched(rel)
        return rel, before, False

    def _after_event(self, rel: str | None, before: FileContext | None, kind: str) -> None:
        """Name the answers citing `rel` when the event moved the file on."""
        if rel is None or rel not in self.citations:
            return
        after = self.window.files.get(rel)
        if before is None or after is None:
            moved = kind in _CHANGE_KINDS
        else:
            moved = (before.sha256, before.state) != (after.sha256, after.state)
        if moved:
            self._note(self.citations.changed(rel))

    def _note(self, text: str | None) -> None:
        if text is None:
            return
        self.window.add_note(text)
        if self._forks_running:
            self.notify_log.append(Note(text))

    # --- the shell's side ----------------------------------------------------------------
    def rereads_due(self, now: float) -> list[Effect]:
        """The next batch of re-reads for the shell (none while one is out)."""
        batch = self.rereads.take(now)
        return [batch] if batch is not None else []

    def reread_done(self, results: Sequence[Reread], now: float) -> list[Effect]:
        """The shell re-read a batch: fold each still-current result into the window."""
        changed = False
        for result in results:
            if not self.rereads.accept(result):
                continue
            applied = apply_reread(self.window, result, self.ingestor.max_held_bytes)
            self.rereads.count(result, applied)
            if applied:
                changed = True
                if self._forks_running:
                    self.notify_log.append(result)
                if result.path in self.citations:
                    self._note(self.citations.changed(result.path))
        self.rereads.batch_done()
        if changed:
            self._changed(now)
        return self.rereads_due(now)

    # --- questions -----------------------------------------------------------------------
    def _answered(self, window: Window, question: str, answer: str, reads: Sequence[str]) -> None:
        """An adopted answer: remember what it read and named."""
        named = cited_paths(answer, window.files, self.citations.max_paths)
        self.citations.record(question, [*reads, *named])

    def _hints(self, hints: list[str]) -> tuple[str, ...]:
        """A question's recently-modified hints, plus the files whose re-read is still out."""
        return tuple(dict.fromkeys([*hints, *self.rereads.waiting()]))

    def _replay_fresh(self, window: Window, entry: object) -> bool:
        """Replay a logged re-read or note onto a committing fork's window."""
        if isinstance(entry, Reread):
            apply_reread(window, entry, self.ingestor.max_held_bytes)
            return True
        if isinstance(entry, Note):
            window.add_note(entry.text)
            return True
        return False

    def freshness_stats(self) -> dict[str, object]:
        """/stats: the re-read counters, what waits, and the answers tracked and named."""
        counters: dict[str, object] = dict(self.rereads.counters.as_dict())
        return counters | {
            "waiting": len(self.rereads),
            "answers_tracked": len(self.citations.answers),
            "answer_notes": self.citations.notes,
        }

    def _fresh_state(self) -> dict[str, object]:
        """The snapshot's part: the answers' links (bounded), so they survive a restart."""
        return {"citations": self.citations.to_state()}

    def restore_fresh(self, body: Mapping[str, object]) -> None:
        """The links of a snapshot's `_fresh_state` (absent in older snapshots: none), after
        `restore`. A cited file the snapshot held but the restored window dropped (it changed
        or went away while the server was down) is named at once."""
        self.citations.restore(body.get("citations"))
        files = body.get("files")
        held = files if isinstance(files, list) else []
        for item in held:
            path = item.get("path") if isinstance(item, dict) else None
            if isinstance(path, str) and path not in self.window.files and path in self.citations:
                self._note(self.citations.changed(path))

    def _wipe_fresh(self) -> None:
        self.rereads.clear()
        self.citations.clear()
