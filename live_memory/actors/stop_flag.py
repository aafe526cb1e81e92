"""An actor's stopped flag: what pykka's `actor_stopped` Event is used for, as a bool.

Kept apart from the runtime (which alone imports pykka) as its own small concept: a thousand
workspace actors each held an Event until this replaced it on the actor and its ref.
"""

from __future__ import annotations

__all__ = ["StopFlag"]


class StopFlag:
    """What pykka's `actor_stopped` is used for (`set`, `is_set`), without a threading.Event.

    An Event is a Condition, a lock and a 64-slot deque, about 1 KB per actor; a thousand
    workspaces activated at once left that much each in the allocator's pages after they
    passivated. Nothing waits on the flag: pykka sets it on stop and reads it in `is_alive`
    and its loop, the pool reads it between messages; a bool suffices under the GIL.
    """

    __slots__ = ("_stopped",)

    def __init__(self) -> None:
        self._stopped = False

    def set(self) -> None:
        self._stopped = True

    def is_set(self) -> bool:
        return self._stopped
