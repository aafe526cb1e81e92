"""Forget the workspaces that are only on disk: `POST /clear {"all": true}`'s second half.

Loaded workspaces are wiped by their own actors (`Clear`); every other one known to the
data directory — a snapshot, facts in the fact store, a structural index database — is
deleted here, on the gateway's thread, which is the only one that activates workspaces:
none can be restored from a snapshot while it is being deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from pathlib import Path
from typing import Final

from live_memory.agent import Services
from live_memory.memory import Snapshots

__all__ = ["forget_stored"]

logger = logging.getLogger(__name__)

_PAGE: Final = 500  # snapshot roots read per page (each page opens at most this many files)


def forget_stored(services: Services, store: Snapshots, keep: Collection[str]) -> int:
    """Delete the snapshot, facts and index of every stored workspace whose root is not in
    `keep` (the loaded ones); returns how many workspaces had something deleted."""
    roots: set[str] = set()
    offset, total = 0, 1
    while offset < total:
        page, total = store.page_of_roots(offset, _PAGE)
        offset += _PAGE
        roots.update(str(root) for root, _ in page)
    for root in roots.difference(keep):
        store.delete(Path(root))
    facts = services.stores.facts
    if facts is not None:
        roots.update(facts.wipe_all_but(keep))
    symbols = services.stores.symbols
    dropped = symbols.delete_closed() if symbols is not None else 0
    forgotten = len(roots.difference(keep))
    logger.info("forgot %d stored workspaces and %d index databases", forgotten, dropped)
    return forgotten
