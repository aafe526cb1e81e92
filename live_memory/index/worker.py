"""The server's symbol indexes and the one thread that fills them.

`SymbolIndexes` (one per server, a durable store like the usage ledger) opens a workspace's
index on activation and closes it on passivation. All parsing happens on ONE dedicated,
low-priority daemon thread, never on the actor pool or the event loop:

- incremental updates (teed content, the tools' reads, notifications, the watcher) go first;
  submitting one is an O(1) append to a bounded queue, so /notify never waits on a parse (a
  full queue drops the update: the next background pass re-checks the file). The teed bytes
  the queue holds are capped too (INDEX_QUEUE_MAX_CONTENT_BYTES): past it an update waits
  without them and the thread reads the file from disk, as for a notification. A file already
  waiting keeps its place and takes the newer update: each update sets the file's rows from
  its own source, so the last one alone gives the same rows, and a burst of events for one
  file (a batch of hook requests, a save seen by the hook and the watcher) costs one;
- then one bounded slice of some workspace's background pass, round robin;
- after each piece of work the thread sleeps in proportion to the CPU time it used, so it
  stays within INDEX_CPU_SHARE of one core however much is left to index.
"""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Generator, Iterator
from pathlib import Path

from live_memory.config import constants as C
from live_memory.index.completion import Completion
from live_memory.index.open_stores import OpenStores
from live_memory.index.store import SymbolStore
from live_memory.index.workspace_index import WorkspaceIndex

__all__ = ["SymbolIndexes"]

# The index thread's work: a file's update (index, path, teed content) or a pass's next slice.
_Job = tuple[WorkspaceIndex, str, bytes | None] | tuple[str, Iterator[None]]

logger = logging.getLogger(__name__)


class SymbolIndexes:
    def __init__(self, data_dir: Path, *, cpu_share: float = C.INDEX_CPU_SHARE) -> None:
        self._dir = data_dir / "index"
        self._cpu_share = min(max(cpu_share, 0.01), 1.0)
        self._open: dict[str, WorkspaceIndex] = {}
        self.open_stores = OpenStores(C.INDEX_OPEN_DATABASES_MAX)
        self._users: dict[str, int] = {}
        self._passes: dict[str, Iterator[None]] = {}
        self._updates: deque[tuple[int, str]] = deque()
        """Waiting updates' keys (id of the index, path as given), in arrival order."""
        self._waiting: dict[tuple[int, str], tuple[WorkspaceIndex, str, bytes | None]] = {}
        """The update each key stands for (the job holds its index, so the id stays its)."""
        self._cond = threading.Condition()
        self._stopped = False
        self._idle = threading.Event()
        self._completions = threading.Condition()
        """Shared by every index's `completed` flag (never `_cond`: a waiter on it could take
        the notify meant for the index thread)."""
        self._content_bytes = 0
        """Teed bytes held by the waiting updates (at most INDEX_QUEUE_MAX_CONTENT_BYTES)."""
        self.dropped_updates = 0
        self._pass_owner: WorkspaceIndex | None = None
        """The index whose pass slice the thread took last (`_released`)."""
        self._thread = threading.Thread(target=self._run, name="symbol-index", daemon=True)
        self._thread.start()

    # --- workspaces ----------------------------------------------------------------------
    def open(
        self,
        root: Path,
        *,
        secret_patterns: tuple[str, ...],
        file_globs: tuple[str, ...] = (),
        vendored: bool = False,
    ) -> WorkspaceIndex:
        """The workspace's index (opened once, counted per user), with its background pass
        scheduled. Every `open` is paired with one `release`."""
        key = os.path.realpath(root)
        with self._cond:
            self._users[key] = self._users.get(key, 0) + 1
            index = self._open.get(key)
            if index is None:
                store = SymbolStore(self._dir / f"{_db_name(key)}.sqlite3", self.open_stores)
                index = WorkspaceIndex(
                    root if str(root) == key else Path(key),
                    store,
                    secret_patterns=secret_patterns,
                    file_globs=file_globs,
                    vendored=vendored,
                    completed=Completion(self._completions),
                )
                self._open[key] = index
                self._passes[key] = index.background_pass()
                self._idle.clear()
                self._cond.notify()
            return index

    def release(self, root: Path) -> None:
        """One user is done; the last one stops the pass and closes the database
        (passivation). A supervisor's next incarnation may open before the old one releases."""
        key = os.path.realpath(root)
        with self._cond:
            users = self._users.get(key, 0) - 1
            if users > 0:
                self._users[key] = users
                return
            self._users.pop(key, None)
            index = self._open.pop(key, None)
            self._passes.pop(key, None)
            if index is not None:
                mine = id(index)
                self._updates = deque(k for k in self._updates if k[0] != mine)
                self._waiting = {k: job for k, job in self._waiting.items() if k[0] != mine}
                self._content_bytes = sum(_size(job[2]) for job in self._waiting.values())
        if index is not None:
            index.store.close()

    def discard(self, index: WorkspaceIndex) -> bool:
        """`empty`: release `index` and delete its database, which its last `release` would
        only close; its work waiting or under way ends as at passivation. An index another
        user still holds (an incarnation that started before the last one stopped) is only
        released: False."""
        key = str(index.root)
        with self._cond:
            shared = self._users.get(key, 0) > 1 or self._open.get(key) is not index
        self.release(index.root)
        if shared:
            return False
        index.store.delete()
        return True

    def recheck(self, index: WorkspaceIndex) -> None:
        """Look at every file again, from the start: files came or went in bulk, or a change
        made before the OS watcher's watches were in place reached no one, and a pass may
        already have gone past the file. A pass not started yet will see it; one under way
        (or finished) starts over, which costs a stat per file unchanged since it was
        indexed."""
        key = str(index.root)
        with self._cond:
            if self._open.get(key) is not index:
                return
            running = self._passes.get(key)
            if isinstance(running, Generator) and not _begun(running):
                return
            # A slice in progress finds its key taken and drops its generator (see _run).
            self._passes[key] = index.background_pass()
            self._idle.clear()
            self._cond.notify()

    def submit(self, index: WorkspaceIndex, path: str, content: bytes | None = None) -> bool:
        """Queue one file's update; False when the queue is full (the update is dropped)."""
        key = (id(index), path)
        with self._cond:
            if key not in self._waiting:
                if len(self._updates) >= C.INDEX_QUEUE_MAX:
                    self.dropped_updates += 1
                    return False
                self._updates.append(key)
            else:
                self._content_bytes -= _size(self._waiting[key][2])
            if self._content_bytes + _size(content) > C.INDEX_QUEUE_MAX_CONTENT_BYTES:
                # A flood of distinct teed files outruns the thread: their bytes waiting here
                # were the server's growth (2,000 x 96 KB: +190 MB). The file is on disk.
                content = None
            self._content_bytes += _size(content)
            self._waiting[key] = (index, path, content)  # the newest update of the file
            self._idle.clear()
            self._cond.notify()
        return True

    @property
    def queued_content_bytes(self) -> int:
        """Teed bytes the waiting updates hold (at most INDEX_QUEUE_MAX_CONTENT_BYTES)."""
        return self._content_bytes

    def delete_closed(self) -> int:
        """Delete the database of every workspace whose index is not open (`clear --all`);
        returns how many. An `open` meanwhile waits, then starts an empty one."""
        with self._cond:
            kept = {_db_name(key) for key in (*self._open, *self._users)}
            try:
                files = [p for p in self._dir.iterdir() if ".sqlite3" in p.name]
            except OSError:  # no index yet
                return 0
            gone = {p.name.partition(".")[0] for p in files} - kept
            for path in files:
                if path.name.partition(".")[0] in gone:  # the -wal and -shm files too
                    path.unlink(missing_ok=True)
        return len(gone)

    def wait_idle(self, timeout: float) -> bool:
        """Block until no update or pass is left (tests, benchmarks); False on timeout."""
        return self._idle.wait(timeout)

    def close(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        self._thread.join(timeout=5)
        for index in list(self._open.values()):
            index.store.close()
        self._open.clear()

    # --- the thread ----------------------------------------------------------------------
    def _checkpoint(self) -> None:
        with self._cond:
            stores = [index.store for index in self._open.values() if index.store.writes]
        for store in stores:
            try:
                store.checkpoint(C.INDEX_WAL_IDLE_CHECKPOINT_WRITES)
            except Exception:  # closed by a release meanwhile: its close checkpointed it
                logger.debug("index checkpoint skipped for %s", store.path)

    def _next(self) -> _Job | None:
        with self._cond:
            while not self._stopped:
                if self._updates:
                    job = self._waiting.pop(self._updates.popleft())
                    self._content_bytes -= _size(job[2])
                    return job
                if self._passes:
                    key = next(iter(self._passes))
                    work = self._passes.pop(key)
                    self._pass_owner = self._open.get(key)
                    return key, work
                self._idle.set()
                self._cond.wait()
            return None

    def _released(self, job: _Job) -> bool:
        """Whether the job's workspace was released while the job ran: passivation closes its
        database under the slice or update in progress (expected, not a failure; the next
        activation's pass stats every file again, so a change cut short is found then)."""
        with self._cond:
            if len(job) == 3:
                return self._open.get(str(job[0].root)) is not job[0]
            return self._open.get(job[0]) is not self._pass_owner

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # lower priority: this thread only
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)
        while True:
            job = self._next()
            if job is None:
                return
            cpu = time.thread_time()
            try:
                if len(job) == 3:
                    index, path, content = job
                    index.update(path, content)
                else:
                    key, work = job
                    if next(work, StopIteration) is not StopIteration:
                        with self._cond:  # back of the round robin
                            if key in self._open and key not in self._passes:
                                self._passes[key] = work
            except Exception:  # one bad file or a closed database must not stop the thread
                if self._released(job):
                    logger.debug("symbol index work ended: its workspace was passivated")
                else:
                    logger.exception("symbol index work failed")
            if not self._updates:  # nothing waits: the WAL's checkpoint delays no update
                self._checkpoint()
            used = time.thread_time() - cpu
            if self._cpu_share < 1.0 and used > 0:
                time.sleep(used * (1.0 / self._cpu_share - 1.0))


def _size(content: bytes | None) -> int:
    return len(content) if content is not None else 0


def _begun(work: Generator[None, None, None]) -> bool:
    return inspect.getgeneratorstate(work) != inspect.GEN_CREATED


def _db_name(key: str) -> str:
    """The database file's stem of the workspace whose real path is `key`."""
    return hashlib.sha256(key.encode()).hexdigest()[:16]
