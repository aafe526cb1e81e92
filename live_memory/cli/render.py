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
    "render_workspace_action",
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
    """`/health` for people: the provider problem in full, budget and usage as sentences."""
    status = health.get("status", "?")
    lines = [f"live-memory {health.get('version', '?')} at {url}: {status}"]
    lines.append(f"  uptime       {render_duration(health.get('uptime_s', '?'))}")
    provider = health.get("provider") or "none configured"
    lines.append(f"  provider     {provider}")
    problem = health.get("problem")
    if isinstance(problem, str) and problem:
        lines.append(f"  problem      {' '.join(problem.split())}")
    lines.append(f"  model        {health.get('model') or '-'}")
    endpoint = health.get("endpoint")
    if isinstance(endpoint, Mapping):
        lines.append(f"  endpoint     {render_endpoint(endpoint)}")
    lines.append(f"  workspaces   {_workspaces(health)}")
    budget = health.get("budget")
    if isinstance(budget, Mapping):
        lines.append(f"  budget       {render_budget(budget)}")
    usage = health.get("usage_today")
    if isinstance(usage, Mapping):
        lines.append(f"  today        {render_usage(usage)}")
    transcripts = health.get("transcripts")
    if isinstance(transcripts, Mapping):
        lines.append(f"  transcripts  {render_counts(transcripts, 'none queued')}")
    watcher = health.get("watcher")
    if isinstance(watcher, Mapping):
        lines.append(f"  watcher      {_watcher(watcher)}")
    for key, fine in (("snapshots", "written normally"), ("data_disk", "writable")):
        part = health.get(key)
        if isinstance(part, Mapping):
            reason = part.get("degraded_reason")
            shown_as = key.replace("_", " ")
            lines.append(f"  {shown_as:<12} {f'DEGRADED: {reason}' if reason else fine}")
    lines.extend(
        f"  {key.replace('_', ' '):<12} {health[key]}"
        for key in ("data_dir", "config_file")
        if key in health
    )
    shown = {"status", "version", "uptime_s", "provider", "problem", "model", "endpoint"}
    shown |= {"workspaces_active", "workspaces_active_max", "workspaces_admitted_over_cap"}
    shown |= {"budget", "usage_today", "transcripts", "watcher", "snapshots", "degraded_reason"}
    shown |= {"data_disk"}
    shown |= {"data_dir", "config_file"}
    lines.extend(  # a field added later: in words too, never raw JSON
        f"  {key.replace('_', ' '):<12} {_words(value)}"
        for key, value in health.items()
        if key not in shown
    )
    return "\n".join(lines)


def render_endpoint(endpoint: Mapping[str, object]) -> str:
    """`https://api.anthropic.com, 200,000-token context (the model table (claude-haiku-4-5))`."""
    text = str(endpoint.get("url") or "-")
    if endpoint.get("local"):
        text += " (a local server)"
    context = endpoint.get("context_tokens")
    if _is_number(context):
        text += f", {_amount('input', context)}-token context"
        if endpoint.get("context_source"):
            text += f" ({endpoint['context_source']})"
    problem = endpoint.get("problem")
    return f"{text}; {' '.join(str(problem).split())}" if problem else text


def _workspaces(health: Mapping[str, object]) -> str:
    text = f"{health.get('workspaces_active', 0)} active"
    cap = health.get("workspaces_active_max")
    if cap is not None:
        text += f", at most {cap}"
        over = health.get("workspaces_admitted_over_cap")
        if over:
            text += f" ({_plural(over, 'admission')} over the cap so far)"
    return text


def _watcher(watcher: Mapping[str, object]) -> str:
    text = f"{watcher.get('mode', '?')}: {_plural(watcher.get('roots', 0), 'root')}, "
    watches = watcher.get("watches", 0)
    text += "1 watch" if watches == 1 else f"{watches} watches"
    polled = watcher.get("roots_polled")
    text += f", {polled} polled" if polled else ""
    reason = watcher.get("degraded_reason")
    return f"{text}; DEGRADED: {reason}" if reason else text


def _words(value: object) -> str:
    """A value for people: a mapping as `key value` pairs."""
    if isinstance(value, Mapping):
        return ", ".join(f"{k.replace('_', ' ')} {_words(v)}" for k, v in value.items())
    return _cell(value, limit=None)


def render_budget(budget: Mapping[str, object]) -> str:
    """`$0.42 spent today of a $5.00 daily cap (8%); resets 2026-12-02T00:00+00:00`."""
    spent, cap = _number(budget.get("spent_today_usd")), _number(budget.get("daily_usd"))
    if cap is None:
        text = f"{_dollars(spent)} spent today, no daily cap"
    else:
        share = f" ({100 * spent / cap:.0f}%)" if spent is not None and cap > 0 else ""
        text = f"{_dollars(spent)} spent today of a {_dollars(cap)} daily cap{share}"
        if budget.get("resets_at"):
            text += f"; resets {budget['resets_at']}"
    if budget.get("exhausted"):
        text += "; EXHAUSTED: questions are refused until the reset"
    elif budget.get("background_paused"):
        text += "; background work paused (near the cap)"
    return text


def render_usage(usage: Mapping[str, object]) -> str:
    """`3 questions, 12,345 tokens in / 678 out, $0.0213, 2 workspaces`."""
    questions = usage.get("questions")
    parts = [_plural(questions, "question")]
    parts.append(f"{_amount('input', usage.get('input'))} tokens in")
    parts[-1] += f" / {_amount('output', usage.get('output'))} out"
    cached = usage.get("cache_read")
    if _is_number(cached) and cached:
        parts.append(f"{_amount('cache_read', cached)} read from cache")
    parts.append(str(_amount("cost_usd", usage.get("cost_usd"))))
    if "workspaces" in usage:
        parts.append(_plural(usage.get("workspaces"), "workspace"))
    return ", ".join(parts)


def render_counts(counts: Mapping[str, object], empty: str) -> str:
    """`{"pending": 1, "done": 3}` -> `1 pending, 3 done`; zeros left out."""
    words = [f"{value} {key}" for key, value in counts.items() if value]
    return ", ".join(words) if words else empty


def render_workspace_action(payload: object, cwd: str, done: str) -> str:
    """One line: `WORKSPACE: reset: memory wiped, preload re-read (3 files loaded)`."""
    where = cwd
    loaded: object = None
    if isinstance(payload, Mapping):
        where = str(payload.get("workspace") or cwd)
        files = payload.get("file_contexts")
        loaded = files.get("loaded") if isinstance(files, Mapping) else None
    suffix = f" ({_plural(loaded, 'file')} loaded)" if _is_number(loaded) and loaded else ""
    return f"{where}: {done}{suffix}"


def _is_number(value: object) -> bool:
    return _number(value) is not None


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _dollars(value: object) -> str:
    amount = _number(value)
    return "$?" if amount is None else f"${amount:.4f}"


def _plural(count: object, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


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
