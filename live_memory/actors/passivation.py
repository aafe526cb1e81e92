"""ActiveWorkspaces: the gateway's registry of active workspace actors and the cap on them.

What a thousand workspaces keep once passivated tracks how many were active at once (the
allocator keeps the pages they were allocated in), so the number active at once has a named
cap, `Settings.workspaces_active_max`. Past it, the least recently used workspaces are asked
to passivate if idle: each decides by the idle sweep's own rule (`WorkspaceState.tick` with no
idle time: nothing in flight or queued, no snapshot the disk refuses), so only a workspace
whose state is all in its snapshot goes. A busy one answers that it stays and counts as used
now. When every one asked is busy, the new workspace is admitted over the cap (counted, and
the gateway logs it): a request is never refused and a busy workspace never dropped for room.

Recency is what the gateway sees: activations, requests routed through it, and a busy answer.
A workspace addressed on the edge's remembered handle is not seen per request, so it may be
asked while between two requests; it passivates then, and its next request reactivates it from
the snapshot. Plain object, no threads: the GatewayActor calls it from its own thread.
"""

from __future__ import annotations

from collections.abc import Iterator, ValuesView
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["ActiveWorkspaces", "MakeRoom", "PassivateIfIdle", "StaysActive"]

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class PassivateIfIdle:
    """To a workspace, from the gateway over the cap: passivate now if the idle sweep would
    (whatever the idle time), else answer `StaysActive`."""


@dataclass(frozen=True, slots=True)
class StaysActive:
    """To the gateway: the workspace asked by `PassivateIfIdle` is busy and stays."""

    root: str


@dataclass(frozen=True, slots=True)
class MakeRoom:
    """What to do after an activation or a busy answer: the roots to ask to passivate if
    idle, and how far over the cap the gateway stays with nobody left to ask (0: none)."""

    ask: tuple[str, ...] = ()
    over_cap: int = 0


class ActiveWorkspaces(Generic[R]):
    """Active workspaces by root, least recently used first, and the asks under way."""

    __slots__ = (
        "_asked",
        "_asking",
        "_newest",
        "_refs",
        "admitted_over_cap",
        "asked_to_passivate",
    )

    def __init__(self) -> None:
        self._refs: dict[str, R] = {}
        """Insertion order is recency: a use moves the root to the end."""
        self._asking: set[str] = set()
        """Asked to passivate if idle, no answer yet (a passivation or 'stays')."""
        self._asked: set[str] = set()
        """Answered 'stays' since the last activation: not asked again in this round."""
        self._newest: str | None = None
        """The last one activated: room is made for it, so it is never asked for room."""
        self.admitted_over_cap = 0
        """Activations that left more workspaces active than the cap (every one asked busy)."""
        self.asked_to_passivate = 0
        """Asks sent, in all (a passivation that follows one is an early passivation)."""

    # --- the registry --------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self._refs)

    def __contains__(self, root: object) -> bool:
        return root in self._refs

    def __iter__(self) -> Iterator[str]:
        return iter(self._refs)

    def get(self, root: str) -> R | None:
        return self._refs.get(root)

    def values(self) -> ValuesView[R]:
        return self._refs.values()

    def add(self, root: str, ref: R) -> None:
        """A workspace became active: the most recently used."""
        self._refs.pop(root, None)
        self._refs[root] = ref

    def touch(self, root: str) -> None:
        """A request for `root` went through the gateway."""
        ref = self._refs.pop(root, None)
        if ref is not None:
            self._refs[root] = ref

    def pop(self, root: str) -> R | None:
        """`root` is passivating (or restarting): no longer active, no longer asked."""
        self._asking.discard(root)
        self._asked.discard(root)
        return self._refs.pop(root, None)

    # --- the cap -------------------------------------------------------------------------
    def activated(self, cap: int) -> MakeRoom:
        """After an activation: a new round of asks, least recently used first."""
        self._asked.clear()
        self._newest = next(reversed(self._refs), None)
        return self._make_room(cap)

    def stays(self, root: str, cap: int) -> MakeRoom:
        """`root` was asked and is busy: used now; ask the next one if still over the cap."""
        if root not in self._asking:  # passivated or restarted meanwhile: nothing to do
            return MakeRoom()
        self._asking.discard(root)
        self._asked.add(root)
        self.touch(root)
        return self._make_room(cap)

    def passivating(self, root: str, cap: int) -> tuple[R | None, MakeRoom]:
        """`root` goes (idle: asked, or by the sweep): its ref, and the rest of the round
        when it was one of those asked (an answer like 'stays', which may close it)."""
        asked = root in self._asking
        ref = self.pop(root)
        return ref, self._make_room(cap) if asked and ref is not None else MakeRoom()

    def _make_room(self, cap: int) -> MakeRoom:
        wanted = len(self._refs) - cap - len(self._asking)
        if wanted <= 0:
            return MakeRoom()
        ask: list[str] = []
        for root in self._refs:
            if len(ask) == wanted:
                break
            if root != self._newest and root not in self._asking and root not in self._asked:
                ask.append(root)
        self._asking.update(ask)
        self.asked_to_passivate += len(ask)
        if ask or self._asking:  # answers still to come may make the room
            return MakeRoom(tuple(ask))
        self.admitted_over_cap += 1
        return MakeRoom(over_cap=len(self._refs) - cap)
