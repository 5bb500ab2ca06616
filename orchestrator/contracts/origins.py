"""How a run was started, and the authority it acts with."""

from __future__ import annotations

from enum import StrEnum


class StartOrigin(StrEnum):
    """Who or what started a run (kept on the run for its whole life)."""

    USER = "user"
    """A person, in the console."""
    API = "api"
    """A program: the HTTP API or a Python caller."""
    SCHEDULE = "schedule"
    """A schedule; `origin_ref` names it."""
    REASSESSMENT = "reassessment"
    """A new assessment cycle after a completed run; `origin_ref` names that run."""
    RETRY = "retry"
    """A new run after a cancelled one; `origin_ref` names that run."""
    REPLAY = "replay"
    """A run replaying another's inputs; `origin_ref` names that run."""

    @property
    def needs_ref(self) -> bool:
        return self is not StartOrigin.USER and self is not StartOrigin.API

    @property
    def refers_to_run(self) -> bool:
        return self in (StartOrigin.REASSESSMENT, StartOrigin.RETRY, StartOrigin.REPLAY)
