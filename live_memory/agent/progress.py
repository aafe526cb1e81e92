"""What a question is doing right now, for the asker's progress notifications (MCP).

A question on a CPU model can take minutes; "thinking, 40 s" says nothing about whether it is
stuck in a 2,900-token prefill, running a search, or streaming its answer. `QuestionProgress`
is written by the question's loop (model call n started, a tool running, text streamed) and
read by the MCP tool, which turns it into progress messages (`describe`) at the pace
`ProgressPacer` decides: at once on a new step, every PROGRESS_STREAM_INTERVAL_S while tokens
stream, every PROGRESS_HEARTBEAT_S otherwise (the heartbeat keeps the client's read timer
alive), at most PROGRESS_MAX_REPORTS per question.

The writer runs on the I/O loop's thread, the reader on the server's: a lock guards the few
fields, and the listener (the reader's wake-up) is called once per read at most, so a stream of
tokens does not flood the reader's loop with wake-ups.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, replace

from live_memory.config import constants as C
from live_memory.providers import StreamTap

__all__ = ["ProgressPacer", "ProgressSnapshot", "QuestionProgress"]


@dataclass(frozen=True, slots=True)
class ProgressSnapshot:
    step: int
    """Counts steps (a model call started, a tool started): a new step is worth a report."""
    doing: str
    """"model", "tool", or what precedes the first call ("starting", "compacting")."""
    model_calls: int = 0
    tool: str = ""
    """The tool running now (doing == "tool")."""
    tools_run: tuple[str, ...] = ()
    """Names of the tools started so far, oldest first (at most PROGRESS_TOOL_NAMES kept)."""
    tool_count: int = 0
    call_chars: int = 0
    """Text streamed by the current model call."""
    total_chars: int = 0
    """Text streamed by every model call of the question."""

    @property
    def call_tokens(self) -> int:
        return round(self.call_chars / C.CHARS_PER_TOKEN)

    @property
    def total_tokens(self) -> int:
        return round(self.total_chars / C.CHARS_PER_TOKEN)


def describe(s: ProgressSnapshot) -> str:
    """The progress message: what is happening now, then what happened so far."""
    if s.doing == "model":
        now = f"model call {s.model_calls}: " + (
            f"~{s.call_tokens} tokens streamed so far"
            if s.call_chars
            else "waiting for the first token (prompt evaluation)"
        )
    elif s.doing == "tool":
        now = f"running {s.tool} (tool call {s.tool_count}, after model call {s.model_calls})"
    else:
        now = s.doing
    done = []
    if s.tool_count:
        done.append(f"{s.tool_count} tool call(s): {', '.join(s.tools_run)}")
    if s.total_chars > (s.call_chars if s.doing == "model" else 0):
        done.append(f"~{s.total_tokens} tokens streamed in all")
    return f"{now}; {'; '.join(done)}" if done else now


class QuestionProgress:
    """One question's progress board (one writer: the question's loop)."""

    __slots__ = ("_listener", "_lock", "_signalled", "_snap")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snap = ProgressSnapshot(0, "starting")
        self._listener: Callable[[], None] | None = None
        self._signalled = False

    def watch(self, listener: Callable[[], None]) -> None:
        """Call `listener` (from the writer's thread) when something changed since the last
        `snapshot()`; it must be cheap and thread-safe (e.g. loop.call_soon_threadsafe)."""
        with self._lock:
            self._listener = listener

    def snapshot(self) -> ProgressSnapshot:
        with self._lock:
            self._signalled = False
            return self._snap

    def describe(self) -> str:
        return describe(self.snapshot())

    def stage(self, doing: str) -> None:
        """A step before the model is asked (compacting the memory, retrieving)."""
        self._update(lambda s: replace(s, step=s.step + 1, doing=doing))

    def model_call(self) -> StreamTap:
        """Model call n+1 starts; its stream's text is counted through the tap returned."""
        self._update(
            lambda s: replace(
                s, step=s.step + 1, doing="model", model_calls=s.model_calls + 1, call_chars=0
            )
        )
        return _CountingTap(self)

    def tool(self, name: str) -> None:
        def start(s: ProgressSnapshot) -> ProgressSnapshot:
            names = (*s.tools_run, name)[-C.PROGRESS_TOOL_NAMES :]
            return replace(
                s,
                step=s.step + 1,
                doing="tool",
                tool=name[: C.PROGRESS_TOOL_NAME_MAX_CHARS],
                tools_run=tuple(n[: C.PROGRESS_TOOL_NAME_MAX_CHARS] for n in names),
                tool_count=s.tool_count + 1,
            )

        self._update(start)

    def streamed(self, chars: int) -> None:
        self._update(
            lambda s: replace(s, call_chars=s.call_chars + chars, total_chars=s.total_chars + chars)
        )

    def _update(self, change: Callable[[ProgressSnapshot], ProgressSnapshot]) -> None:
        with self._lock:
            self._snap = change(self._snap)
            listener = None if self._signalled else self._listener
            self._signalled = self._signalled or listener is not None
        if listener is not None:
            listener()


class _CountingTap(StreamTap):
    """A stream tap that also counts the streamed text on the question's progress board."""

    __slots__ = ("_progress",)

    def __init__(self, progress: QuestionProgress) -> None:
        super().__init__()
        self._progress = progress

    def add_text(self, piece: str) -> None:
        super().add_text(piece)
        self._progress.streamed(len(piece))


class ProgressPacer:
    """When the next progress report is due (pure: the caller passes the time)."""

    def __init__(self) -> None:
        self._sent_at: float | None = None
        self._step = -1
        self._chars = 0
        self.reports = 0

    def due_in(self, s: ProgressSnapshot, now: float) -> float:
        """Seconds until a report of `s` is due (<= 0: now)."""
        if self._sent_at is None:
            return 0.0
        since = now - self._sent_at
        heartbeat = C.PROGRESS_HEARTBEAT_S - since
        if self.reports >= C.PROGRESS_MAX_REPORTS:
            return heartbeat
        if s.step != self._step:
            return min(C.PROGRESS_MIN_INTERVAL_S - since, heartbeat)
        if s.total_chars != self._chars:
            return min(C.PROGRESS_STREAM_INTERVAL_S - since, heartbeat)
        return heartbeat

    def pending(self, s: ProgressSnapshot) -> bool:
        """Something changed since the last report (a wait for it need not watch for more)."""
        return s.step != self._step or s.total_chars != self._chars

    def sent(self, s: ProgressSnapshot, now: float) -> None:
        self._sent_at, self._step, self._chars = now, s.step, s.total_chars
        self.reports += 1
