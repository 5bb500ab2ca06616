"""Errors callers can act on; each has a stable code (the API maps them to problem details)."""

from __future__ import annotations

from typing import Any


class LifecycleError(Exception):
    code = "lifecycle_error"
    http_status = 400

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details


class NotFound(LifecycleError):
    code = "not_found"
    http_status = 404


class InvalidInput(LifecycleError):
    code = "invalid_input"
    http_status = 422


class IdempotencyConflict(LifecycleError):
    """The idempotency key was used before with a different request."""

    code = "idempotency_conflict"
    http_status = 409


class ActiveRunExists(LifecycleError):
    code = "active_run_exists"
    http_status = 409


class ConcurrentUpdate(LifecycleError):
    """The run changed under us (version mismatch); the caller retries."""

    code = "concurrent_update"
    http_status = 409


class DatabaseBusy(LifecycleError):
    """The database stayed busy (SQLite's one write lock held elsewhere) for longer than
    the busy timeout, retries included. Nothing of the request was stored."""

    code = "database_busy"
    http_status = 503


class SignalRejected(LifecycleError):
    """The signal was recorded but is invalid for this run (the reason says why)."""

    code = "signal_rejected"
    http_status = 422


class RoleNotHeld(InvalidInput):
    """An approval named a role its principal was never granted (or holds no role at all)."""

    code = "role_not_held"


class UnknownFrameworkSelected(InvalidInput):
    """A framework_selected signal names a framework the run's catalogues do not have;
    nothing is recorded. Details list the available frameworks and the close matches."""

    code = "unknown_framework"
