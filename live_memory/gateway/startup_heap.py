"""The heap the server starts with is set aside from the cyclic garbage collector.

What a started server holds (modules, classes, functions, the SDKs' schemas and validators,
the tree-sitter grammars: several hundred thousand objects) lives as long as the process,
yet every full collection walked all of it again: 40-220 ms each on this 2-core machine, one
of them inside the first 30 questions of a fresh server (bench-peer's phase a), the GIL held
throughout, so every thread and the question in flight waited. `gc.freeze()` (the standard
library's own provision for this) moves what is alive at start-up to a permanent generation
that collections skip; what the server allocates afterwards is collected as before. The
young generations are collected first, so recent garbage is not kept; a full collection
there found nothing (start-up had just run its own) and cost 60-240 ms of start-up here.
"""

from __future__ import annotations

import gc
import logging

__all__ = ["set_aside_startup_heap"]

logger = logging.getLogger(__name__)


def set_aside_startup_heap() -> int:
    """Collect the young generations, then freeze what is alive; returns how many objects
    were set aside."""
    gc.collect(1)
    gc.freeze()
    count = gc.get_freeze_count()
    logger.debug("start-up heap set aside from collection: %d objects", count)
    return count
