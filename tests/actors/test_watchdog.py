"""The watchdog actor against a real observer, real git repositories and a real actor system.

A recording actor stands in for the gateway; every wait is bounded and wakes on its event.
"""

from __future__ import annotations

import errno
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers.api import ObservedWatch
from watchdog.observers.inotify import InotifyObserver

from live_memory.actors import Actor, ActorRef, ActorSystem, Notify, Route
from live_memory.actors.message import GetWatcherStatus, UnwatchRoot, WatchRoot
from live_memory.actors.watchdog import WatchdogActor
from live_memory.config import Settings
from tests.support.repo import git, make_repo

WAIT_S = 10.0
Kinds = dict[str, str]


class RouteLog:
    """What the stand-in gateway received, with a wake-up for waiters."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._routes: list[Route] = []
        self._changed = threading.Event()

    def add(self, route: Route) -> None:
        with self._lock:
            self._routes.append(route)
        self._changed.set()

    def routes(self, since: int = 0) -> list[Route]:
        with self._lock:
            return self._routes[since:]

    def mark(self) -> int:
        with self._lock:
            return len(self._routes)

    def kinds(self, root: Path, since: int = 0) -> Kinds:
        """Latest kind per workspace-relative path routed for `root`."""
        latest: Kinds = {}
        for route in self.routes(since):
            if route.cwd != str(root):
                continue
            assert isinstance(route.message, Notify)
            for event in route.message.events:
                latest[Path(event.path).relative_to(root).as_posix()] = event.kind
        return latest

    def wait_for(self, ready: Callable[[], bool], timeout: float = WAIT_S) -> None:
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.start()
        try:
            while not deadline.is_set():
                self._changed.clear()
                if ready():
                    return
                self._changed.wait(timeout)
                if deadline.is_set() and ready():
                    return
        finally:
            timer.cancel()
        pytest.fail(f"not routed within {timeout} s; got {self.routes()}")


class RecordingGateway(Actor):
    kind = "recorder"

    def __init__(self, system: ActorSystem, log: RouteLog) -> None:
        super().__init__(system, "recording-gateway")
        self.log = log

    def handle(self, message: Any) -> None:
        if isinstance(message, Route):
            self.log.add(message)
        else:
            super().handle(message)


class RoomForOneRoot(InotifyObserver):
    """A real inotify observer whose watch budget runs out after one root, as the kernel's does."""

    def __init__(self) -> None:
        super().__init__()
        self.room = 1

    def schedule(
        self,
        event_handler: FileSystemEventHandler,
        path: str | Path,
        *,
        recursive: bool = False,
        event_filter: list[type[FileSystemEvent]] | None = None,
        follow_symlink: bool = False,
    ) -> ObservedWatch:
        if self.room == 0:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        self.room -= 1
        return super().schedule(
            event_handler,
            path,
            recursive=recursive,
            event_filter=event_filter,
            follow_symlink=follow_symlink,
        )


@pytest.fixture
def system() -> Iterator[ActorSystem]:
    actors = ActorSystem()
    yield actors
    actors.shutdown()


@pytest.fixture
def log() -> RouteLog:
    return RouteLog()


def start_watchdog(
    system: ActorSystem, log: RouteLog, settings: Settings | None = None, **options: Any
) -> ActorRef[Any]:
    gateway = system.start(RecordingGateway, log)
    return system.start(
        WatchdogActor,
        gateway=gateway,
        settings=settings or Settings(watcher="os"),
        **options,
    )


def status(watchdog: ActorRef[Any]) -> dict[str, object]:
    reply: Future[dict[str, object]] = Future()
    watchdog.tell(GetWatcherStatus(reply))
    return reply.result(timeout=WAIT_S)


def watch(watchdog: ActorRef[Any], *roots: Path) -> dict[str, object]:
    """Watch `roots`; the status reply proves the watches are in place."""
    for root in roots:
        watchdog.tell(WatchRoot(str(root)))
    return status(watchdog)


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(
        tmp_path / "repo",
        {".gitignore": "*.log\nbuild/\n", "a.py": "a = 1\n", "b.py": "b = 1\n", "d.py": "d\n"},
    )


def test_edits_creations_and_deletions_are_routed_as_watcher_events(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log)
    assert watch(watchdog, repo) == {"mode": "inotify", "roots": 1, "degraded_reason": None}
    write(repo / "a.py", "a = 2\n")
    write(repo / "src" / "new.py", "new\n")
    (repo / "b.py").unlink()
    (repo / "d.py").rename(repo / "e.py")
    expected = {"a.py": "change", "src/new.py": "add", "b.py": "unlink"}
    expected |= {"d.py": "unlink", "e.py": "add"}
    log.wait_for(lambda: log.kinds(repo) == expected)
    for route in log.routes():
        assert route.cwd == str(repo)
        assert route.activate_unknown is False
        assert isinstance(route.message, Notify)
        assert route.message.reply is None
        for event in route.message.events:
            assert event.content is None
            assert Path(event.path).is_absolute()


def test_a_branch_switch_invalidates_every_file_that_differs(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    write(repo / "d.py", "d = 2\n")  # edited before watching: only the commit's diff tells
    watchdog = start_watchdog(system, log)
    watch(watchdog, repo)
    git(repo, "checkout", "-q", "-b", "other")
    write(repo / "a.py", "a = 2\n")
    (repo / "b.py").unlink()
    write(repo / "c.py", "c\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "other")
    log.wait_for(lambda: log.kinds(repo).get("d.py") == "change")
    committed = log.kinds(repo)
    assert committed.pop("c.py") in ("add", "change")  # the watcher's add, then maybe the diff's
    assert committed == {"a.py": "change", "b.py": "unlink", "d.py": "change"}

    switched = log.mark()
    git(repo, "checkout", "-q", "main")
    log.wait_for(
        lambda: (
            {k: v for k, v in log.kinds(repo, switched).items() if k != "b.py"}
            == {"a.py": "change", "c.py": "unlink", "d.py": "change"}
            and log.kinds(repo, switched).get("b.py") in ("add", "change")
        )
    )


def test_a_head_move_without_working_tree_writes_still_invalidates(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    write(repo / "a.py", "a = 2\n")
    git(repo, "commit", "-q", "-am", "second")
    watchdog = start_watchdog(system, log)
    watch(watchdog, repo)
    git(repo, "reset", "-q", "--soft", "HEAD~1")
    log.wait_for(lambda: log.kinds(repo) == {"a.py": "change"})


def test_git_internals_and_ignored_files_produce_no_events(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log)
    watch(watchdog, repo)
    write(repo / "debug.log", "noise\n")
    write(repo / "build" / "out.txt", "artifact\n")
    write(repo / ".git" / "scratch", "internal\n")
    git(repo, "tag", "v1")
    git(repo, "update-index", "--refresh")
    write(repo / "sentinel.txt", "last\n")
    # Events are handled in order and debounced per path: once the sentinel (written last)
    # is routed, anything routable that came before it has been routed too.
    log.wait_for(lambda: "sentinel.txt" in log.kinds(repo))
    assert log.kinds(repo) == {"sentinel.txt": "add"}


def test_running_out_of_inotify_watches_degrades_to_polling_without_losing_roots(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    first = make_repo(tmp_path / "first", {"a.py": "a\n"})
    second = make_repo(tmp_path / "second", {"b.py": "b\n"})
    watchdog = start_watchdog(system, log, observer_factory=RoomForOneRoot, poll_interval_s=0.1)
    reported = watch(watchdog, first, second)
    assert reported["mode"] == "polling"
    assert reported["roots"] == 2
    assert "inotify watch limit reached" in str(reported["degraded_reason"])
    write(first / "a.py", "a = 2\n")
    write(second / "b.py", "b = 22\n")
    log.wait_for(
        lambda: log.kinds(first) == {"a.py": "change"} and log.kinds(second) == {"b.py": "change"}
    )


def test_forced_polling_watches_by_polling(system: ActorSystem, log: RouteLog, repo: Path) -> None:
    watchdog = start_watchdog(system, log, force_polling=True, poll_interval_s=0.1)
    assert watch(watchdog, repo) == {"mode": "polling", "roots": 1, "degraded_reason": None}
    (repo / "a.py").unlink()
    log.wait_for(lambda: log.kinds(repo) == {"a.py": "unlink"})


def test_an_unwatched_root_routes_nothing_and_watching_twice_is_one_watch(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    kept = make_repo(tmp_path / "kept", {"a.py": "a\n"})
    dropped = make_repo(tmp_path / "dropped", {"a.py": "a\n"})
    watchdog = start_watchdog(system, log)
    assert watch(watchdog, kept, kept, dropped)["roots"] == 2
    watchdog.tell(UnwatchRoot(str(dropped)))
    assert status(watchdog)["roots"] == 1
    write(dropped / "a.py", "changed while unwatched\n")
    write(kept / "a.py", "changed\n")
    log.wait_for(lambda: log.kinds(kept) == {"a.py": "change"})
    assert {route.cwd for route in log.routes()} == {str(kept)}


def test_with_the_watcher_off_nothing_is_watched(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log, settings=Settings(watcher="off"))
    assert watch(watchdog, repo) == {"mode": "off", "roots": 0, "degraded_reason": None}


def test_a_root_that_is_not_a_directory_is_skipped_without_harm(
    system: ActorSystem, log: RouteLog, tmp_path: Path, repo: Path
) -> None:
    watchdog = start_watchdog(system, log)
    assert watch(watchdog, tmp_path / "missing", repo)["roots"] == 1
