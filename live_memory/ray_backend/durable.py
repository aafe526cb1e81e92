"""The workspace actor as a Ray workspace host runs it: notifications durable when acknowledged.

Locally a notification's effect on the manifest is snapshotted debounced (a crash of the one
process loses the last seconds, and so does everything else it held). On a cluster the
workspace actor's process is expected to die and come back (node loss, a kill, an upgrade),
and the gateway has already told the hook "accepted": so the host follows every accepted
notification with a `Flush`, and acknowledges only once the snapshot is written. Everything
else is the local WorkspaceActor, unchanged.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Any

from live_memory.actors import Promise, Route, WorkspaceActor, resolve
from live_memory.workspace import Limits

__all__ = ["DurableWorkspaceActor", "Flush"]


@dataclass(frozen=True, slots=True)
class Flush:
    """Write the snapshot now if anything changed; reply with why it failed, or None."""

    reply: Promise[str | None]


class DurableWorkspaceActor(WorkspaceActor):
    def limits(self) -> Limits:
        # No debounce: a snapshot owed is written at the next tick or Flush, not seconds later.
        return replace(super().limits(), manifest_debounce_s=0.0)

    def handle(self, message: Any) -> None:
        if not isinstance(message, Flush):
            super().handle(message)
        elif self.passivating:  # after the Notify it follows, on the next incarnation
            self.gateway.tell(Route(self.root, message))
        else:
            state = self.state
            self.event(lambda: state.tick(time.monotonic(), math.inf))
            resolve(message.reply, state.degraded if state.dirty else None)
