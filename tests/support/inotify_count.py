"""The inotify watches this process holds, as the kernel counts them (Linux: /proc)."""

from __future__ import annotations

import os

__all__ = ["kernel_watches"]


def kernel_watches() -> int:
    """inotify watches this process holds, as the kernel counts them (Linux)."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}", encoding="ascii") as info:
                count += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # closed meanwhile
    return count
