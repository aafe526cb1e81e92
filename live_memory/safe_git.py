"""Running git so that nothing a repository configures is executed, and nothing outlives us.

A repository on disk is untrusted input: its `.git/config` (or an included file) may name
programs git would run during read-only commands: filter drivers (`filter.<name>.clean`,
`smudge`, `process`, selected by `.gitattributes`) run by `git status` to compare contents,
`core.fsmonitor`, external diff and textconv drivers, hooks, a pager, gpg for signatures.
Every git call goes through `run_git_commands`, which

- asks git first which `filter.*` and `diff.*`/`merge.*` driver keys the configuration
  defines (reading configuration runs nothing) and overrides each with an empty value
  (git then treats the driver as absent), plus a fixed set of overrides for the
  single-valued keys (fsmonitor, hooksPath, pager, external diff, ssh, askpass, gpg, editor);
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

__all__ = ["GitRun", "git_environment", "run_git_commands"]

logger = logging.getLogger(__name__)

_FIXED_OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=",
    "core.askPass=",
    "core.editor=true",
    "core.alternateRefsCommand=",
    "core.quotepath=off",
    "credential.helper=",
    "diff.external=",
    "gpg.program=false",
    "log.showSignature=false",
    "color.ui=never",
    "submodule.recurse=false",
    "status.submoduleSummary=false",
    "diff.ignoreSubmodules=dirty",
)
_DRIVER_SECTIONS = r"^(filter|diff|merge)\."
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

    Raises FileNotFoundError when git is not installed and OSError when it cannot start.
    A command still running at `timeout` seconds is killed with its process group.
    """
    git = shutil.which("git")
    if git is None:
        raise FileNotFoundError("git is not installed on the server")
    deadline = time.monotonic() + timeout
    env = git_environment()
    prefix = [git, "--no-pager", "--no-optional-locks", *_overrides(git, root, env, deadline)]
    return _run_all(root, [[*prefix, *args] for args in commands], env, deadline, stdin)


def _overrides(git: str, root: Path, env: dict[str, str], deadline: float) -> list[str]:
    options: list[str] = []
    for item in _FIXED_OVERRIDES:
        options += ["-c", item]
    listed = _run_all(
        root,
        [[git, "--no-pager", "config", "-z", "--name-only", "--get-regexp", _DRIVER_SECTIONS]],
        env,
        min(deadline, time.monotonic() + 5.0),
        None,
    )[0]
    if listed.returncode is None:
        # git could not even read its configuration in time: run nothing else.
        raise TimeoutError("git config took too long")
    for key in listed.stdout.split(b"\0"):
        if _DRIVER_KEY.match(key):
            name = os.fsdecode(key)
            options += ["-c", f"{name}="]
            required = _REQUIRED_FILTER.match(key)
            if required:  # a required filter that is absent would make git fail instead
                options += ["-c", f"{os.fsdecode(required.group(1))}.required=false"]
    return options


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
