"""The eight run statuses of the spec."""

from __future__ import annotations

from enum import StrEnum


class WorkflowStatus(StrEnum):
    """Operational status of a lifecycle run."""

    PENDING = "pending"
    """Created; the coordinator has not started it yet."""
    RUNNING = "running"
    """A step is executing (inline or as a job)."""
    WAITING_FOR_INPUT = "waiting_for_input"
    """Waiting for documents, a framework choice, or a new draft after a rejection."""
    WAITING_FOR_APPROVAL = "waiting_for_approval"
    """Waiting for a validated human approval of an artifact version."""
    BLOCKED = "blocked"
    """Depends on information, an approval, configuration or manual intervention."""
    FAILED = "failed"
    """An unrecovered technical error."""
    CANCELLED = "cancelled"
    """Explicitly cancelled by an authorised actor. Terminal."""
    COMPLETED = "completed"
    """The assessment was closed. Terminal."""

    @property
    def is_terminal(self) -> bool:
        return self in TERMINAL_STATUSES

    @property
    def is_active(self) -> bool:
        """Active runs hold the assessment: at most one per assessment."""
        return self not in TERMINAL_STATUSES


TERMINAL_STATUSES = frozenset({WorkflowStatus.CANCELLED, WorkflowStatus.COMPLETED})
