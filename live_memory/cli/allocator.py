"""The server process's memory allocator.

CPython's small-object allocator hands memory back to the system only in whole 1 MiB arenas,
and an arena stays as long as one object in it lives. A burst of workspace actors (each a
thread with its own short-lived objects) interleaves with the few objects that outlive it, so
after passivation a server would keep most of the burst's memory. The system allocator, with
the `malloc_trim` the gateway calls after passivations, gives those pages back.

`PYTHONMALLOC` is read only when the interpreter starts, so `serve` re-executes itself once
with it set. `exec` keeps the process id, so supervisors (systemd, launchd, the plugin's
start-up backstop) see one process. An explicit `PYTHONMALLOC` is always respected.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping

__all__ = ["ALLOCATOR_VARIABLE", "SYSTEM_ALLOCATOR", "reexec_with_system_allocator"]

logger = logging.getLogger(__name__)

ALLOCATOR_VARIABLE = "PYTHONMALLOC"
SYSTEM_ALLOCATOR = "malloc"


def reexec_with_system_allocator(environ: Mapping[str, str]) -> None:
    """Replace this process with itself on the system allocator (Linux/glibc only).

    Returns only when nothing is to be done (the variable is set, or not Linux) or the
    re-execution failed, which is logged and harmless: the server then runs as it is.
    """
    if ALLOCATOR_VARIABLE in environ or not sys.platform.startswith("linux"):
        return
    argv = [sys.executable, *sys.orig_argv[1:]]
    env = {**environ, ALLOCATOR_VARIABLE: SYSTEM_ALLOCATOR}
    try:
        os.execve(sys.executable, argv, env)
    except OSError as exc:
        logger.warning("could not switch to the system allocator (%s); continuing", exc)
