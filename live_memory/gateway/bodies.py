"""What the edge checks and builds that needs no actor: the knowledge endpoints' JSON bodies
(`/api/import`, `/api/transcript`) turned into plain values or InputError / PayloadTooLarge,
and the /health document assembled from the figures the service gathered.
"""

from __future__ import annotations

from live_memory import __version__
from live_memory.config import Settings
from live_memory.config import constants as C
from live_memory.errors import InputError, PayloadTooLarge
from live_memory.gateway import ask_arguments
from live_memory.hygiene import redact_secrets
from live_memory.memory import LedgerFact

__all__ = ["health_document", "import_body", "transcript_body"]


def import_body(body: object, limit: int) -> tuple[object, tuple[LedgerFact, ...]]:
    """(cwd as given, the facts) of an import; at most `limit` facts (413 beyond)."""
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object")
    items = _list(body.get("facts"), "facts")
    if len(items) > limit:
        raise PayloadTooLarge(
            f"{len(items)} facts in one import; LIVE_MEMORY_MAX_IMPORT_FACTS is {limit}"
        )
    return body.get("cwd"), tuple(_fact(item, i) for i, item in enumerate(items))


def transcript_body(body: object) -> tuple[str, str, str]:
    """(cwd, session id, absolute transcript path) of a finished session to distil."""
    if not isinstance(body, dict):
        raise InputError("body must be a JSON object")
    session = body.get("session_id")
    path = body.get("transcript_path")
    if not isinstance(session, str) or not session:
        raise InputError("session_id must be a non-empty string")
    if not isinstance(path, str) or not path.startswith("/"):
        raise InputError("transcript_path must be an absolute path")
    return ask_arguments.cwd(body.get("cwd")), session, path


def _list(value: object, name: str) -> list[object]:
    if not isinstance(value, list):
        raise InputError(f"{name} must be a list")
    return value


def _fact(item: object, index: int) -> LedgerFact:
    """A LedgerFact from its JSON form (`/api/import`, `live-memory import`)."""
    if not isinstance(item, dict) or not isinstance(item.get("text"), str) or not item["text"]:
        raise InputError(f"facts[{index}] must be an object with a non-empty text")
    sources = item.get("sources", [])
    if not isinstance(sources, list) or not all(
        isinstance(s, list) and len(s) == 2 and all(isinstance(x, str) for x in s) for s in sources
    ):
        raise InputError(f"facts[{index}].sources must be a list of [path, sha256] pairs")
    category = item.get("category", "architecture")
    if not isinstance(category, str):
        raise InputError(f"facts[{index}].category must be a string")
    # Imported facts reach every prompt: they pass the same redaction as any file content.
    text, _ = redact_secrets(item["text"])
    return LedgerFact(text, tuple((s[0], s[1]) for s in sources), category, bool(item.get("stale")))


def health_document(
    settings: Settings,
    *,
    uptime_s: float,
    active: int,
    numbers: dict[str, object],
    endpoint: object,
    watcher: dict[str, object] | None,
    snapshot_error: str | None,
    disk_problem: str | None,
) -> dict[str, object]:
    """/health: "degraded" (with the reason) when the watcher, snapshot writes or the data
    directory's disk are."""
    body: dict[str, object] = {
        "status": "ok" if settings.provider else "no_provider",
        "version": __version__,
        "uptime_s": round(uptime_s, 1),
        "workspaces_active": active,
        "provider": settings.provider,
        "model": settings.model if settings.provider else None,
        "data_dir": str(settings.data_dir),
        "config_file": str(settings.config_file or settings.data_dir / C.CONFIG_FILE_NAME),
        **numbers,
    }
    if settings.provider is None:
        body["problem"] = settings.provider_problem
    else:
        body["endpoint"] = endpoint
    if watcher is not None:
        body["watcher"] = watcher
        if watcher.get("degraded_reason"):
            body["status"] = "degraded"
    body["snapshots"] = {"degraded_reason": snapshot_error}
    body["data_disk"] = {"degraded_reason": disk_problem}
    reason = disk_problem or snapshot_error
    if reason is not None:
        body["status"] = "degraded"
        body["degraded_reason"] = reason
    return body
