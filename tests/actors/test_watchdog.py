"""The watchdog actor against a real observer, real git repositories and a real actor system.

A recording actor stands in for the gateway; every wait is bounded and wakes on its event.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from live_memory.actors import Actor, ActorRef, ActorSystem, Notify, Route
from live_memory.actors.message import GetWatcherStatus, Revalidate, UnwatchRoot, WatchRoot
from live_memory.actors.watchdog import WatchdogActor
from live_memory.config import Settings
from live_memory.watchers.gitdirs import find_git_dirs
from tests.support.inotify_count import kernel_watches
from tests.support.repo import git, make_repo

# A bound on waits that end on an event (a route, a status reply), never a sleep: it is only
# reached when something is wrong, so it is sized for a loaded machine (walking 10,000 nested
# directories took over 10 s at load 20), not for a quiet one.
WAIT_S = 60.0
Kinds = dict[str, str]
PLACED = Revalidate(files=True, watches_placed=True)  # routed once a root's watches are in place


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
            if route.cwd != str(root) or not isinstance(route.message, Notify):
                continue
            for event in route.message.events:
                latest[Path(event.path).relative_to(root).as_posix()] = event.kind
        return latest

    def revalidations(self, root: Path, since: int = 0) -> list[Revalidate]:
        return [
            r.message
            for r in self.routes(since)
            if r.cwd == str(root) and isinstance(r.message, Revalidate)
        ]

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
    reported = watch(watchdog, repo)
    assert (reported["mode"], reported["roots"], reported["degraded_reason"]) == (
        "inotify",
        1,
        None,
    )
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
        if route.message == PLACED:
            continue
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


def test_a_root_over_its_watch_budget_releases_its_watches_and_is_polled(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    small = make_repo(tmp_path / "small", {"a.py": "a\n"})
    big = make_repo(tmp_path / "big", {f"d{i}/f.py": "x\n" for i in range(5)})
    watchdog = start_watchdog(system, log, max_per_root=3, poll_interval_s=0.1)
    reported = watch(watchdog, small, big)
    assert reported["roots"] == 2
    assert reported["roots_polled"] == 1
    assert "needs more than 3 watches" in str(reported["degraded_reason"])
    meta = len(_git_meta_dirs(small)) + len(_git_meta_dirs(big))
    assert reported["watches"] == 1 + meta  # small's root dir; big kept only its HEAD watches
    # The polled root re-checks its window's files; the watched one still routes edits.
    log.wait_for(lambda: bool(log.revalidations(big)))
    assert all(r.files and not r.tree_stale for r in log.revalidations(big))
    write(small / "a.py", "a = 2\n")
    log.wait_for(lambda: log.kinds(small) == {"a.py": "change"})


def test_a_root_whose_watches_are_placed_is_revalidated_once_index_included(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    # What changed between the workspace's activation and the watches reached no one.
    watched = make_repo(tmp_path / "watched", {"a.py": "a\n"})
    polled = make_repo(tmp_path / "polled", {f"d{i}/f.py": "x\n" for i in range(5)})
    watchdog = start_watchdog(system, log, max_per_root=3, poll_interval_s=3600.0)
    watch(watchdog, watched, polled)
    watch(watchdog, watched)  # watching twice places nothing again
    log.wait_for(lambda: bool(log.revalidations(watched)))
    status(watchdog)  # every message sent before this reply has been handled
    assert log.revalidations(watched) == [PLACED]
    assert not any(r.watches_placed for r in log.revalidations(polled))


def test_the_total_budget_is_shared_by_every_root(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    first = make_repo(tmp_path / "first", {"a/x.py": "a\n"})
    second = make_repo(tmp_path / "second", {"b/y.py": "b\n"})
    budget = 2 + len(_git_meta_dirs(first))
    watchdog = start_watchdog(system, log, max_total=budget)
    reported = watch(watchdog, first, second)
    assert reported["roots_polled"] == 1
    assert "LIVE_MEMORY_WATCH_MAX_TOTAL" in str(reported["degraded_reason"])
    assert int(str(reported["watches"])) <= budget + len(_git_meta_dirs(second))


def test_ignored_directories_get_no_watches(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    root = make_repo(tmp_path / "r", {".gitignore": "node_modules/\n", "src/a.py": "a\n"})
    for i in range(20):
        write(root / "node_modules" / f"p{i}" / "lib" / "index.js", "x\n")
    watchdog = start_watchdog(system, log)
    reported = watch(watchdog, root)
    assert reported["watches"] == 2 + len(_git_meta_dirs(root))  # the root and src/
    write(root / "node_modules" / "p0" / "lib" / "index.js", "y\n")
    write(root / "src" / "a.py", "a = 2\n")
    log.wait_for(lambda: "src/a.py" in log.kinds(root))
    assert log.kinds(root) == {"src/a.py": "change"}


def test_a_new_directory_is_watched_and_its_files_reported(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log)
    watch(watchdog, repo)
    write(repo / "pkg" / "deep" / "mod.py", "m\n")
    log.wait_for(lambda: log.kinds(repo).get("pkg/deep/mod.py") == "add")
    mark = log.mark()
    write(repo / "pkg" / "deep" / "mod.py", "m = 2\n")  # the new directory has its watch
    log.wait_for(lambda: log.kinds(repo, mark).get("pkg/deep/mod.py") == "change")


def test_a_storm_becomes_revalidations_not_thousands_of_events(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log, storm_paths=50)
    watch(watchdog, repo)
    for i in range(400):
        write(repo / "gen" / f"f{i}.txt", "x\n")
    log.wait_for(lambda: any(r.files and r != PLACED for r in log.revalidations(repo)))
    routed = sum(len(r.message.events) for r in log.routes() if isinstance(r.message, Notify))
    assert routed < 400
    assert any(r.tree_stale for r in log.revalidations(repo))


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A scratch directory on tmpfs when there is one: 10,000 nested directories take half
    a minute to delete on a busy ext4 disk, about a second in memory."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    scratch = Path(tempfile.mkdtemp(dir=shm, prefix="live-memory-test-"))
    try:
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_deep_directory_does_not_crash_the_watcher_and_is_reported(
    system: ActorSystem, log: RouteLog, fast_tmp: Path
) -> None:
    repo = make_repo(fast_tmp / "repo", {"a.py": "a = 1\n"})
    _deep_chain(repo / "deep", 10_000)
    try:
        watchdog = start_watchdog(system, log, max_per_root=20_000)
        reported = watch(watchdog, repo)
        assert reported["mode"] == "inotify"
        assert reported["roots_polled"] == 0
        # Below PATH_MAX's reach nothing can be watched; /health says so.
        assert "could not be watched" in str(reported["degraded_reason"])
        write(repo / "a.py", "a = 2\n")
        log.wait_for(lambda: log.kinds(repo).get("a.py") == "change")
    finally:
        system.shutdown()  # the watches go first, then the chain
        _remove_chain(repo / "deep")


def test_a_worktree_head_move_invalidates_the_files_that_differ(
    system: ActorSystem, log: RouteLog, repo: Path, tmp_path: Path
) -> None:
    tree = tmp_path / "feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(tree))
    assert (tree / ".git").is_file()
    write(tree / "a.py", "a = 2\n")
    git(tree, "commit", "-q", "-am", "feature edit")
    watchdog = start_watchdog(system, log)
    watch(watchdog, tree)
    git(tree, "reset", "-q", "--soft", "HEAD~1")  # refs only: no working-tree event at all
    log.wait_for(
        lambda: (
            log.kinds(tree) == {"a.py": "change"}
            and any(r.tree_stale and not r.files for r in log.revalidations(tree))
        )
    )


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
    assert {route.cwd for route in log.routes() if route.message != PLACED} == {str(kept)}


def test_with_the_watcher_off_nothing_is_watched(
    system: ActorSystem, log: RouteLog, repo: Path
) -> None:
    watchdog = start_watchdog(system, log, settings=Settings(watcher="off"))
    reported = watch(watchdog, repo)
    assert (reported["mode"], reported["roots"], reported["watches"]) == ("off", 0, 0)


def test_a_root_that_is_not_a_directory_is_skipped_without_harm(
    system: ActorSystem, log: RouteLog, tmp_path: Path, repo: Path
) -> None:
    watchdog = start_watchdog(system, log)
    assert watch(watchdog, tmp_path / "missing", repo)["roots"] == 1


def _git_meta_dirs(root: Path) -> list[str]:
    """The git metadata directories the watcher watches for HEAD moves of `root`."""

    dirs = find_git_dirs(str(root))
    assert dirs is not None
    wanted = [*dirs.head_dirs, os.path.join(dirs.gitdir, "logs")]
    return [d for d in dict.fromkeys(wanted) if os.path.isdir(d)]


def _deep_chain(top: Path, levels: int) -> None:
    """`levels` nested directories below `top`, made without ever naming the full path
    (it is far longer than PATH_MAX)."""
    top.mkdir()
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(levels):
            os.mkdir("d", dir_fd=fd)
            child = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = child
    finally:
        os.close(fd)


def _remove_chain(top: Path) -> None:
    """Remove a chain made by `_deep_chain` iteratively (shutil.rmtree recurses)."""
    fds = [os.open(top, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open("d", os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    os.close(fds.pop())
    while fds:
        fd = fds.pop()
        os.rmdir("d", dir_fd=fd)
        os.close(fd)
    top.rmdir()


def test_a_submodule_head_move_invalidates_its_files(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    lib = make_repo(tmp_path / "lib", {"a.py": "a = 1\n"})
    write(lib / "a.py", "a = 2\n")
    git(lib, "commit", "-q", "-am", "second")
    app = make_repo(tmp_path / "app", {"main.py": "m\n"})
    git(app, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "vendor/lib")
    git(app, "commit", "-qm", "vendor lib")
    sub = app / "vendor" / "lib"
    assert (sub / ".git").is_file()
    watchdog = start_watchdog(system, log)
    watch(watchdog, app)
    git(sub, "reset", "-q", "--soft", "HEAD~1")  # the submodule's refs move, nothing else
    log.wait_for(lambda: log.kinds(app) == {"vendor/lib/a.py": "change"})


def test_an_ignored_directory_made_inside_a_watched_tree_loses_its_watches(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    # src/ is free of ignored directories, so one recursive watch covers it; watchdog extends
    # such a watch to every new directory, an ignored one too, until the watcher splits it.
    root = make_repo(tmp_path / "r", {".gitignore": "node_modules/\n", "src/pkg/a.py": "a\n"})
    watchdog = start_watchdog(system, log)
    placed = watch(watchdog, root)["watches"]
    held = kernel_watches()
    for i in range(20):
        write(root / "src" / "node_modules" / f"p{i}" / "lib" / "index.js", "x\n")
    write(root / "src" / "pkg" / "a.py", "a = 2\n")
    log.wait_for(lambda: "src/pkg/a.py" in log.kinds(root))
    assert status(watchdog)["watches"] == placed
    assert kernel_watches() == held
    write(root / "src" / "node_modules" / "p0" / "lib" / "index.js", "y\n")
    write(root / "src" / "pkg" / "b.py", "b\n")
    log.wait_for(lambda: "src/pkg/b.py" in log.kinds(root))
    assert log.kinds(root) == {"src/pkg/a.py": "change", "src/pkg/b.py": "add"}


def test_a_directory_deleted_and_made_again_is_watched_again(
    system: ActorSystem, log: RouteLog, tmp_path: Path
) -> None:
    # src/ holds an ignored directory, so it has a watch of its own, which its deletion ends.
    files = {".gitignore": "build/\n", "src/a.py": "a\n", "src/build/out.txt": "o\n"}
    root = make_repo(tmp_path / "r", files)
    watchdog = start_watchdog(system, log)
    watch(watchdog, root)
    shutil.rmtree(root / "src")
    log.wait_for(lambda: log.kinds(root).get("src/a.py") == "unlink")
    write(root / "src" / "a.py", "a = 2\n")
    log.wait_for(lambda: log.kinds(root).get("src/a.py") == "add")
    mark = log.mark()
    write(root / "src" / "a.py", "a = 3\n")  # seen only through the new directory's watch
    log.wait_for(lambda: log.kinds(root, mark).get("src/a.py") == "change")
