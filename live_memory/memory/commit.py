"""The optimistic commit rule (design §concurrency): pure, tested without threads."""

from __future__ import annotations

from typing import Literal

__all__ = ["CommitOutcome", "decide_commit"]

CommitOutcome = Literal["linear", "race_adopted", "race_dropped"]


def decide_commit(
    base_version: int,
    current_version: int,
    wiped_at_version: int,
    score: tuple[int, int],
    current_score: tuple[int, int],
) -> CommitOutcome:
    """Linear commits are always adopted (compaction included); on a race the fork that
    explored more (files read, then tokens) wins. A fork taken before a wipe never lands."""
    if base_version < wiped_at_version:
        return "race_dropped"
    if base_version == current_version:
        return "linear"
    return "race_adopted" if score > current_score else "race_dropped"
