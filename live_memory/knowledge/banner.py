"""The one-line health banner the SessionStart hook prints.

Exact wording (segments joined by " · "), healthy, degraded (warnings first) and down:

    live-memory: 3 questions today · $0.02 · window 41% · queue 0 pending · 12 workspaces
    live-memory: ⚠ 2 transcripts failed · 3 questions today · $0.02 · window 41% · …
    live-memory: server not running at http://127.0.0.1:7711 — start it with `live-memory serve`

Segments and where they come from:
- warnings: `⚠ <why>` when the workspace's root is refused (`/`, a home directory or above
  one: `refused`), `⚠ N transcript(s) failed` from `health["transcripts"]["failed"]` when
  > 0, and `⚠ no model provider configured` when `health["status"] == "no_provider"`;
- `N question(s) today` and the cost from `health["usage_today"]` (`questions`, `cost_usd`);
  cost has two decimals, and a non-zero amount under half a cent shows as `<$0.01`;
- `window P%` from `stats_summary["context"]["fill_pct"]` (the `/stats?cwd=` JSON), rounded;
- `queue N pending` from `health["transcripts"]["pending"]`;
- `N workspace(s)` from `health["workspaces_known"]`, else `health["workspaces_active"]`.
A segment whose data is missing is left out rather than shown as a misleading zero.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from live_memory.config.constants import DEFAULT_HOST, DEFAULT_PORT

__all__ = ["BANNER_PREFIX", "health_banner"]

logger = logging.getLogger(__name__)

BANNER_PREFIX = "live-memory: "
_SEPARATOR = " · "
_DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"


def health_banner(
    health: Mapping[str, object] | None,
    stats_summary: Mapping[str, object] | None,
    *,
    server_url: str = _DEFAULT_URL,
    refused: str | None = None,
) -> str:
    """The banner for `health` (the `/health` JSON, None when the server did not answer) and
    `stats_summary` (the `/stats?cwd=` JSON of this workspace, None when unknown); `refused`
    says why that workspace's root is not served."""
    if health is None:
        return (
            f"{BANNER_PREFIX}server not running at {server_url} — start it with `live-memory serve`"
        )
    transcripts = _mapping(health.get("transcripts"))
    usage = _mapping(health.get("usage_today"))
    context = _mapping(stats_summary.get("context")) if stats_summary is not None else {}
    segments: list[str] = [f"⚠ {refused}"] if refused else []
    failed = _count(transcripts.get("failed"))
    if failed:
        segments.append(f"⚠ {_plural(failed, 'transcript')} failed")
    if health.get("status") == "no_provider":
        segments.append("⚠ no model provider configured")
    questions = _count(usage.get("questions"))
    if questions is not None:
        segments.append(f"{_plural(questions, 'question')} today")
    cost = _number(usage.get("cost_usd"))
    if cost is not None:
        segments.append(_dollars(cost))
    fill = _number(context.get("fill_pct"))
    if fill is not None:
        segments.append(f"window {round(fill)}%")
    pending = _count(transcripts.get("pending"))
    if pending is not None:
        segments.append(f"queue {pending} pending")
    workspaces = _count(health.get("workspaces_known", health.get("workspaces_active")))
    if workspaces is not None:
        segments.append(_plural(workspaces, "workspace"))
    return BANNER_PREFIX + (_SEPARATOR.join(segments) if segments else "running")


def _mapping(value: object) -> Mapping[str, object]:
    return value if isinstance(value, Mapping) else {}


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _count(value: object) -> int | None:
    number = _number(value)
    return None if number is None else int(number)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _dollars(amount: float) -> str:
    if 0 < amount < 0.005:
        return "<$0.01"
    return f"${amount:.2f}"
