"""Running git so that nothing a repository configures is executed, and nothing outlives us.

A repository on disk is untrusted input: its `.git/config` (or an included file) may name
programs git would run during read-only commands: filter drivers (`filter.<name>.clean`,
`smudge`, `process`, selected by `.gitattributes`) run by `git status` to compare contents,
`core.fsmonitor`, external diff and textconv drivers, hooks, a pager, gpg for signatures.
Every git call goes through `run_git_commands`, which

- asks git first which `filter.*` and `diff.*`/`merge.*` driver keys the configuration
  defines (reading configuration runs nothing) and overrides each with an empty value
  (git then treats the driver as absent), plus a fixed set of overrides for the
  single-valued keys (fsmonitor, hooksPath, pager, external diff, ssh, askpass, gpg, editor).
  Overrides travel as `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>` pairs, never `-c`: `-c`
  splits at the first `=`, and a driver's name may hold one (`filter.a=b.clean`);
- asks git, in the same breath, which git directory serves the directory, refuses one that
  is not the work tree's own (`live_memory.git_location`: a `.git` naming another
  repository), and pins the rest with `GIT_DIR`/`GIT_WORK_TREE`;
- never lets git recurse into submodules' work trees (their own configuration would apply);
- drops the system configuration and git's environment knobs that run programs;
- starts each git in its own process group and kills the whole group at the deadline, so
  a stuck child (say a filter in a repository we could not neutralise) is not orphaned.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from live_memory.errors import GitDirRefused
from live_memory.git_location import GitLocation, foreign_reason

__all__ = ["GitRun", "git_environment", "run_git_commands"]

logger = logging.getLogger(__name__)

_FIXED_OVERRIDES = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.sshCommand", ""),
    ("core.askPass", ""),
    ("core.editor", "true"),
    ("core.alternateRefsCommand", ""),
    ("core.quotepath", "off"),
    ("credential.helper", ""),
    ("diff.external", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("log.showSignature", "false"),
    ("color.ui", "never"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("diff.ignoreSubmodules", "dirty"),
)
_LOCATE = ("--git-dir", "--git-common-dir", "--show-toplevel")
# Listed with their values: core.worktree says whether a git directory links back (submodules).
_INSPECTED = r"^(filter|diff|merge)\.|^core\.worktree$"
# Keys of per-driver sections whose value is a command.
_DRIVER_KEY = re.compile(
    rb"^(?:filter\.[^\n]+\.(?:clean|smudge|process)|diff\.[^\n]+\.(?:command|textconv)|"
    rb"merge\.[^\n]+\.driver)$",
    re.IGNORECASE,
)
_REQUIRED_FILTER = re.compile(rb"^(filter\.[^\n]+)\.(?:clean|smudge|process)$", re.IGNORECASE)
# Environment variables through which git would run a program or read other config.
_DROPPED_ENV = (
    "GIT_EXTERNAL_DIFF",
    "GIT_PAGER",
    "PAGER",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_EDITOR",
    "GIT_SEQUENCE_EDITOR",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_CONFIG",
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_TRACE",
    "GIT_TRACE2",
)


@dataclass(frozen=True, slots=True)
class GitRun:
    """One finished git command; `returncode` None means it was killed at the deadline."""

    returncode: int | None
    stdout: bytes
    stderr: bytes


def git_environment(base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git call gets: no system config, no prompts, no pager."""
    env = {k: v for k, v in (os.environ if base is None else base).items()}
    for name in _DROPPED_ENV:
        env.pop(name, None)
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_OPTIONAL_LOCKS="0",
        GIT_PAGER="cat",
        LC_ALL="C",
    )
    return env


def run_git_commands(
    root: Path,
    commands: Sequence[Sequence[str]],
    *,
    timeout: float,
    stdin: bytes | None = None,
) -> list[GitRun]:
    """Run the commands concurrently in `root` (results in order), neutralised as above.

    Raises FileNotFoundError when git is not installed (or older than 2.31), OSError when it
    cannot start, GitDirRefused when `root` is in no work tree or its git directory belongs
    to another repository (`live_memory.git_location`).
    A command still running at `timeout` seconds is killed with its process group.
    """
    git = shutil.which("git")
    if git is None:
        raise FileNotFoundError("git is not installed on the server")
    deadline = time.monotonic() + timeout
    env = git_environment()
    location, overrides = _inspect(git, root, env, deadline)
    env.update(GIT_DIR=location.git_dir, GIT_WORK_TREE=location.work_tree)
    _configure(env, [*_FIXED_OVERRIDES, *overrides])
    prefix = [git, "--no-pager", "--no-optional-locks"]
    return _run_all(root, [[*prefix, *args] for args in commands], env, deadline, stdin)


def _inspect(
    git: str, root: Path, env: dict[str, str], deadline: float
) -> tuple[GitLocation, list[tuple[str, str]]]:
    """Where git finds the repository from `root` (refused unless it is the work tree's
    own), and the overrides that disarm the drivers its configuration defines.

    Raises GitDirRefused, FileNotFoundError for a git older than 2.31, and TimeoutError
    when git cannot even say that in time.
    """
    inspecting = dict(env)
    _configure(inspecting, _FIXED_OVERRIDES)
    where, listed = _run_all(
        root,
        [
            [git, "--no-pager", "rev-parse", "--path-format=absolute", *_LOCATE],
            [git, "--no-pager", "config", "-z", "--get-regexp", _INSPECTED],
        ],
        inspecting,
        min(deadline, time.monotonic() + 5.0),
        None,
    )
    if where.returncode is None or listed.returncode is None:
        # git could not even read its configuration in time: run nothing else.
        raise TimeoutError("git config took too long")
    real_root = os.path.realpath(root)
    paths = [os.path.realpath(os.fsdecode(p)) for p in where.stdout.split(b"\n") if p]
    if where.stdout.startswith(b"--path-format"):
        # Before 2.31 git echoes the option and ignores GIT_CONFIG_COUNT, so no override
        # would hold: refuse rather than run with the drivers live.
        raise FileNotFoundError("git 2.31 or newer is needed to run git safely")
    if where.returncode != 0 or len(paths) != 3 or not _contains(paths[2], real_root):
        said = where.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitDirRefused(
            f"{root} is not inside a git work tree" + (f" ({said[-1]})" if said else ""),
            foreign=False,
        )
    location = GitLocation(git_dir=paths[0], common_dir=paths[1], work_tree=paths[2])
    overrides: list[tuple[str, str]] = []
    core_worktree = None
    for record in listed.stdout.split(b"\0"):
        key, _, value = record.partition(b"\n")
        if key.lower() == b"core.worktree":
            core_worktree = os.fsdecode(value)
        elif _DRIVER_KEY.match(key):
            overrides.append((os.fsdecode(key), ""))
            required = _REQUIRED_FILTER.match(key)
            if required:  # a required filter that is absent would make git fail instead
                overrides.append((f"{os.fsdecode(required.group(1))}.required", "false"))
    reason = foreign_reason(real_root, location, core_worktree)
    if reason is not None:
        logger.warning("git refused in %s: %s", root, reason)
        raise GitDirRefused(f"git is not run here: {reason}", foreign=True)
    return location, overrides


def _configure(env: dict[str, str], pairs: Sequence[tuple[str, str]]) -> None:
    """Pass config overrides as `GIT_CONFIG_KEY_<n>`/`GIT_CONFIG_VALUE_<n>`, which git takes
    whole: a key with `=` in its name (`filter.a=b.clean`) stays that key."""
    for number, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{number}"] = key
        env[f"GIT_CONFIG_VALUE_{number}"] = value
    env["GIT_CONFIG_COUNT"] = str(len(pairs))


def _contains(directory: str, path: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _run_all(
    root: Path,
    argvs: Sequence[Sequence[str]],
    env: dict[str, str],
    deadline: float,
    stdin: bytes | None,
) -> list[GitRun]:
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for argv in argvs:
            processes.append(
                subprocess.Popen(
                    argv,
                    cwd=root,
                    env=env,
                    stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,  # its own process group, killed as one
                )
            )
        results = []
        for process in processes:
            try:
                out, err = process.communicate(
                    input=stdin, timeout=max(deadline - time.monotonic(), 0.0)
                )
            except subprocess.TimeoutExpired:
                # Not communicate() again: a child that left the group may hold the pipes.
                _kill_group(process)
                process.wait()
                results.append(GitRun(None, b"", b""))
                continue
            results.append(GitRun(process.returncode, out, err))
        return results
    finally:
        for process in processes:
            if process.poll() is None:  # an error above left it running
                _kill_group(process)
                process.wait()
            for stream in (process.stdin, process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    # Only while the leader is unreaped: its pid (the group's id) cannot have been reused.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
