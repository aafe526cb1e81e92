"""Human-readable output of the CLI; `--json` output bypasses this module entirely."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Final

__all__ = [
    "render_actors",
    "render_answer",
    "render_by_day",
    "render_config",
    "render_duration",
    "render_health",
    "render_json",
    "render_mapping",
    "render_table",
]

_CELL_MAX: Final = 48
_BY_DAY_COLUMNS: Final = (
    ("day", "DAY"),
    ("questions", "QUESTIONS"),
    ("input", "INPUT"),
    ("output", "OUTPUT"),
    ("cache_read", "CACHE READ"),
    ("cache_write", "CACHE WRITE"),
    ("cost_usd", "COST"),
)
_ACTOR_COLUMNS: Final = (
    ("name", "NAME"),
    ("kind", "KIND"),
    ("mailbox_depth", "MAILBOX"),
    ("current_message", "CURRENT"),
    ("busy_s", "BUSY"),
    ("processed", "DONE"),
    ("failures", "FAILED"),
    ("last_error", "LAST ERROR"),
)


def render_json(value: object) -> str:
    return json.dumps(value, indent=2, sort_keys=False, ensure_ascii=False)


def render_duration(seconds: object) -> str:
    """`3725` -> `1h 2m`; anything that is not a number is shown as is."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        return str(seconds)
    total = int(seconds)
    days, rest = divmod(total, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    if minutes:
        return f"{minutes}m {secs}s"
    return f"{seconds:.1f}s" if isinstance(seconds, float) and seconds < 10 else f"{secs}s"


def render_health(health: Mapping[str, object], url: str) -> str:
    status = health.get("status", "?")
    lines = [f"live-memory {health.get('version', '?')} at {url}: {status}"]
    lines.append(f"  uptime     {render_duration(health.get('uptime_s', '?'))}")
    provider = health.get("provider") or "none configured"
    lines.append(f"  provider   {provider}")
    lines.append(f"  model      {health.get('model') or '-'}")
    lines.append(f"  workspaces {health.get('workspaces_active', 0)} active")
    shown = {"status", "version", "uptime_s", "provider", "model", "workspaces_active"}
    lines.extend(f"  {key:<10} {_cell(value)}" for key, value in health.items() if key not in shown)
    return "\n".join(lines)


def render_table(rows: Sequence[Mapping[str, object]], columns: Sequence[tuple[str, str]]) -> str:
    """A plain left-aligned table; cells are cut to a readable width."""
    cells = [[header for _, header in columns]]
    cells.extend([_cell(row.get(key)) for key, _ in columns] for row in rows)
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(line, widths, strict=True)).rstrip()
        for line in cells
    )


def render_actors(actors: Sequence[Mapping[str, object]]) -> str:
    if not actors:
        return "no actors running"
    rows = []
    for actor in actors:
        row = dict(actor)
        workspace = row.get("workspace")
        if workspace:
            row["name"] = f"{row.get('name')} ({workspace})"
        row["busy_s"] = render_duration(row["busy_s"]) if row.get("busy_s") else "-"
        rows.append(row)
    return render_table(rows, _ACTOR_COLUMNS)


def render_answer(payload: object) -> str:
    """The answer text of POST /api/ask, whatever envelope the server wraps it in."""
    if isinstance(payload, str):
        return payload
    if isinstance(payload, Mapping):
        # `text` is the answer with its `[live-memory] model=… cost=…` trailer, as MCP gets it.
        for key in ("text", "answer", "result"):
            value = payload.get(key)
            if isinstance(value, str):
                return value
    return render_json(payload)


def render_mapping(payload: object) -> str:
    """`key: value` lines for a flat JSON object (nested values as compact JSON)."""
    if not isinstance(payload, Mapping):
        return render_json(payload)
    if not payload:
        return "ok"
    width = max(len(str(key)) for key in payload)
    return "\n".join(
        f"{key!s:<{width}}  {_cell(value, limit=None)}" for key, value in payload.items()
    )


def render_by_day(days: Sequence[Mapping[str, object]]) -> str:
    """Per-day usage (`/stats?by_day=1`): tokens and cost a day, newest first, then a total."""
    if not days:
        return "no usage recorded yet"
    rows: list[dict[str, object]] = [
        {key: _amount(key, day.get(key)) for key, _ in _BY_DAY_COLUMNS} for day in days
    ]
    total: dict[str, object] = {"day": "TOTAL"}
    for key, _ in _BY_DAY_COLUMNS[1:]:
        values = [day.get(key) for day in days]
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        total[key] = _amount(key, sum(numbers)) if len(numbers) == len(values) else "-"
    return render_table([*rows, total], _BY_DAY_COLUMNS)


def _amount(key: str, value: object) -> object:
    """`$0.0213` for a cost, `12,345` for a token count, the value itself otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    if key == "cost_usd":
        return f"${value:.4f}"
    return f"{int(value):,}"


def render_config(items: Sequence[tuple[str, object]]) -> str:
    if not items:
        return "(no settings)"
    width = max(len(key) for key, _ in items)
    return "\n".join(f"{key:<{width}} = {_cell(value, limit=None)}" for key, value in items)


def _cell(value: object, limit: int | None = _CELL_MAX) -> str:
    if value is None:
        text = "-"
    elif isinstance(value, str):
        text = value
    elif isinstance(value, bool | int | float):
        text = str(value).lower() if isinstance(value, bool) else str(value)
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    if limit is not None and len(text) > limit:
        return text[: limit - 1] + "…"
    return text
