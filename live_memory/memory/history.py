"""The window's append-only history, with its sizes kept current in O(1) per turn.

A list of turns that counts, as turns come and go, the characters of the conversation (Q/A)
and of the bookkeeping (observation deltas and their acks): the budget reads both without
walking the history.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, MutableSequence
from typing import overload

from live_memory.memory.model import QA_KINDS, RETRIEVAL_KIND, Turn

__all__ = ["History"]


class History(MutableSequence[Turn]):
    """A list of `Turn`s; compares equal to a list with the same turns."""

    __slots__ = ("_turns", "delta_chars", "qa_chars", "qa_count")

    def __init__(self, turns: Iterable[Turn] = ()) -> None:
        self._turns: list[Turn] = []
        self.qa_chars = 0
        self.delta_chars = 0
        self.qa_count = 0
        self.extend(turns)

    @property
    def chars(self) -> int:
        """Characters of every turn's text."""
        return self.qa_chars + self.delta_chars

    def _count(self, turn: Turn, sign: int) -> None:
        if turn.kind in QA_KINDS:
            self.qa_chars += sign * len(turn.text)
            self.qa_count += sign
        elif turn.kind == RETRIEVAL_KIND:  # kept by a freeze, as the Q/A: counted with them
            self.qa_chars += sign * len(turn.text)
        else:
            self.delta_chars += sign * len(turn.text)

    @overload
    def __getitem__(self, index: int) -> Turn: ...
    @overload
    def __getitem__(self, index: slice) -> list[Turn]: ...
    def __getitem__(self, index: int | slice) -> Turn | list[Turn]:
        return self._turns[index]

    @overload
    def __setitem__(self, index: int, value: Turn) -> None: ...
    @overload
    def __setitem__(self, index: slice, value: Iterable[Turn]) -> None: ...
    def __setitem__(self, index: int | slice, value: Turn | Iterable[Turn]) -> None:
        if isinstance(index, slice):
            assert not isinstance(value, Turn)
            new = list(value)
            for turn in self._turns[index]:
                self._count(turn, -1)
            self._turns[index] = new
            for turn in new:
                self._count(turn, 1)
            return
        assert isinstance(value, Turn)
        self._count(self._turns[index], -1)
        self._turns[index] = value
        self._count(value, 1)

    def __delitem__(self, index: int | slice) -> None:
        gone = self._turns[index] if isinstance(index, slice) else [self._turns[index]]
        for turn in gone:
            self._count(turn, -1)
        del self._turns[index]

    def __len__(self) -> int:
        return len(self._turns)

    def __iter__(self) -> Iterator[Turn]:
        return iter(self._turns)

    def insert(self, index: int, value: Turn) -> None:
        self._turns.insert(index, value)
        self._count(value, 1)

    def append(self, value: Turn) -> None:
        self._turns.append(value)
        self._count(value, 1)

    def extend(self, values: Iterable[Turn]) -> None:
        for turn in list(values):
            self.append(turn)

    def __iadd__(self, values: Iterable[Turn]) -> History:
        self.extend(values)
        return self

    def __eq__(self, other: object) -> bool:
        if isinstance(other, History):
            return self._turns == other._turns
        if isinstance(other, list):
            return self._turns == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"History({self._turns!r})"

    def copy(self) -> History:
        clone = History.__new__(History)
        clone._turns = list(self._turns)
        clone.qa_chars, clone.delta_chars, clone.qa_count = (
            self.qa_chars,
            self.delta_chars,
            self.qa_count,
        )
        return clone
