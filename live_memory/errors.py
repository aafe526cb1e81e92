"""The one exception tree of Live Memory.

LiveMemoryError
├── ConfigError                 a setting is invalid (the message names the variable)
├── InputError                  a caller sent something we refuse (mapped to 4xx)
│   ├── RequestTimeout          the body did not arrive in time (408)
│   ├── ClientGone              the client disconnected; its work was cancelled (499)
│   ├── InvalidCwd              cwd is relative, missing or not a directory
│   │   └── RefusedRoot         its root is /, a home directory or above one (403)
│   ├── UnknownWorkspace        no live state and no snapshot for that workspace (404)
│   ├── PayloadTooLarge         a body or field is over its limit (413)
│   ├── Busy                    the admission queue is full (429)
│   └── UnknownJob              an async job id nobody issued (404)
├── NoProviderConfigured        no model provider is configured (the message says what to set)
├── ProviderError               the model provider failed after retries
│   ├── PromptTooLong           the prompt exceeded the model's context
│   ├── ProviderAuthError       the key or credential was refused
│   └── ProviderBadResponse     the provider answered something we cannot read
├── PathOutsideWorkspace        the path jail refused a path
├── GitDirRefused               git not run: no work tree here, or its git directory is another's
├── SnapshotError               a snapshot could not be read or written
│   └── AnswerNotPersisted      an answer was computed but its snapshot could not be written (507)
├── StorageFull                 the data directory is full, over quota or read-only (507)
├── ShuttingDown                the server is draining and admits nothing new (503)
├── BudgetExhausted             the daily spend cap is reached (429)
└── WorkspaceUnavailable        (Ray backend) the workspace's actor cannot be reached (503)
    └── NoCheckoutNode          no Ray node holds the workspace's checkout (503)
"""

from __future__ import annotations

__all__ = [
    "AnswerNotPersisted",
    "BudgetExhausted",
    "Busy",
    "ClientGone",
    "ConfigError",
    "GitDirRefused",
    "InputError",
    "InvalidCwd",
    "LiveMemoryError",
    "NoCheckoutNode",
    "NoProviderConfigured",
    "PathOutsideWorkspace",
    "PayloadTooLarge",
    "PromptTooLong",
    "ProviderAuthError",
    "ProviderBadResponse",
    "ProviderError",
    "RefusedRoot",
    "RequestTimeout",
    "ShuttingDown",
    "SnapshotError",
    "StorageFull",
    "UnknownJob",
    "UnknownWorkspace",
    "WorkspaceUnavailable",
]


class LiveMemoryError(Exception):
    """Base of every error Live Memory raises on purpose."""


class ConfigError(LiveMemoryError):
    """A configuration value is invalid; the message names the variable."""


class InputError(LiveMemoryError):
    """A caller sent input we refuse."""


class RequestTimeout(InputError):
    """A client did not send its whole request body within the configured time."""


class ClientGone(InputError):
    """The client disconnected before its answer was ready; the work was cancelled."""


class InvalidCwd(InputError):
    """The cwd is not an absolute path to an existing directory."""


class RefusedRoot(InvalidCwd):
    """The workspace root is too broad to serve (LIVE_MEMORY_ALLOWED_ROOTS may allow it)."""


class UnknownWorkspace(InputError):
    """A workspace with neither live state nor a snapshot."""


class PayloadTooLarge(InputError):
    """A body, batch or field exceeds its configured limit."""


class Busy(InputError):
    """The workspace's admission queue is full."""


class UnknownJob(InputError):
    """An async job id that was never issued, or was already collected or swept."""


class NoProviderConfigured(LiveMemoryError):
    """No model provider is configured; the message tells the user what to set."""


class ProviderError(LiveMemoryError):
    """The model provider failed (after retries where retrying made sense)."""


class PromptTooLong(ProviderError):
    """The provider refused the prompt as longer than the model's context."""


class ProviderAuthError(ProviderError):
    """The provider refused our key or credential."""


class ProviderBadResponse(ProviderError):
    """The provider answered with something we cannot interpret."""


class PathOutsideWorkspace(LiveMemoryError):
    """A path that would leave the workspace root (or is otherwise unsafe)."""


class GitDirRefused(LiveMemoryError):
    """git was not run for a directory: it is in no git work tree (`foreign` False), or the
    git directory found for it belongs to another repository (`foreign` True)."""

    def __init__(self, message: str, *, foreign: bool) -> None:
        super().__init__(message)
        self.foreign = foreign


class SnapshotError(LiveMemoryError):
    """A snapshot could not be read or written."""


class StorageFull(LiveMemoryError):
    """The data directory cannot be written (disk full, quota exceeded, read-only file system);
    the message names the write that failed (`data_disk.out_of_storage` builds it)."""


class ShuttingDown(LiveMemoryError):
    """The server is shutting down and admits no new questions."""


class BudgetExhausted(LiveMemoryError):
    """The daily spend budget is used up."""


class AnswerNotPersisted(SnapshotError):
    """An answer was computed but the snapshot that makes it durable could not be written.

    The answer text is carried (and shown) so the caller can still use it; the memory will
    not hold it after a restart.
    """

    def __init__(self, reason: str, answer_text: str) -> None:
        super().__init__(
            f"the answer is NOT persisted ({reason}); Live Memory will not remember it after "
            f"a restart. The answer was:\n{answer_text}"
        )
        self.reason = reason
        self.answer_text = answer_text

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.reason, self.answer_text))


class WorkspaceUnavailable(LiveMemoryError):
    """(Ray backend) The workspace's actor could not be reached before the deadline."""


class NoCheckoutNode(WorkspaceUnavailable):
    """(Ray backend) No live Ray node advertises the checkout a workspace actor needs."""
