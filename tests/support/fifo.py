"""FIFOs planted where a file is expected, and a call that must not block on them.

A call that does block is not left hanging the test run: after the bound, each FIFO is
opened for writing and closed, which releases a reader blocked in `open()` (it then reads
end-of-file), and the test fails saying it blocked."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

__all__ = ["plant_fifo", "without_blocking"]

T = TypeVar("T")
BOUND_S = 10.0


def plant_fifo(path: Path) -> Path:
    """A FIFO at `path` (whatever was there is replaced); no writer will ever come."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


def without_blocking(call: Callable[[], T], *fifos: Path, bound_s: float = BOUND_S) -> T:
    """`call()`'s result, failing the test if it is still blocked after `bound_s`."""
    outcome: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:  # re-raised in the test's thread
            failure.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(bound_s)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        thread.join(bound_s)
        raise AssertionError(f"blocked on a FIFO for {bound_s:.0f} s")
    if failure:
        raise failure[0]
    return outcome[0]
