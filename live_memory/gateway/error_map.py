"""The one place where errors become HTTP statuses and JSON bodies."""

from __future__ import annotations

import logging

from live_memory.errors import (
    AnswerNotPersisted,
    BudgetExhausted,
    Busy,
    ClientGone,
    ConfigError,
    InputError,
    LiveMemoryError,
    NoProviderConfigured,
    PayloadTooLarge,
    ProviderError,
    RefusedRoot,
    RequestTimeout,
    ShuttingDown,
    StorageFull,
    UnknownJob,
    UnknownWorkspace,
    WorkspaceUnavailable,
)
from live_memory.gateway.json_response import ORJSONResponse

__all__ = ["error_payload", "error_response", "status_for"]

logger = logging.getLogger(__name__)

_STATUS: tuple[tuple[type[BaseException], int], ...] = (
    (RefusedRoot, 403),
    (UnknownWorkspace, 404),
    (UnknownJob, 404),
    (PayloadTooLarge, 413),
    (RequestTimeout, 408),
    (ClientGone, 499),
    (Busy, 429),
    (BudgetExhausted, 429),
    (InputError, 422),
    (ConfigError, 422),
    (NoProviderConfigured, 503),
    (ShuttingDown, 503),
    (WorkspaceUnavailable, 503),
    (ProviderError, 502),
    (TimeoutError, 504),
    (AnswerNotPersisted, 507),
    (StorageFull, 507),
    (LiveMemoryError, 500),
)


def status_for(error: BaseException) -> int:
    for kind, status in _STATUS:
        if isinstance(error, kind):
            return status
    return 500


def error_response(error: BaseException) -> ORJSONResponse:
    status, payload = error_payload(error)
    return ORJSONResponse(payload, status_code=status)


def error_payload(error: BaseException) -> tuple[int, dict[str, str]]:
    """(HTTP status, `{"error": message, "kind": class name}`) for an error."""
    status = status_for(error)
    if status >= 500 and not isinstance(error, LiveMemoryError | TimeoutError):
        logger.error("unexpected error", exc_info=error)
        message = "internal error; see the server log"
    elif isinstance(error, TimeoutError):
        message = str(error) or "timed out waiting for the answer"
    else:
        message = str(error)
    return status, {"error": message, "kind": type(error).__name__}
