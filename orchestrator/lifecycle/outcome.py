"""A handler's answer to one signal, before decide() adds the audit of the signal itself."""

from __future__ import annotations

from dataclasses import dataclass, field

from orchestrator.contracts.signals import SignalFate
from orchestrator.lifecycle.effects import Effect
from orchestrator.lifecycle.state import RunState


@dataclass(frozen=True)
class Outcome:
    state: RunState
    effects: list[Effect] = field(default_factory=list)
    fate: SignalFate = SignalFate.APPLIED
    reason: str | None = None


def ignored(state: RunState, reason: str) -> Outcome:
    """Valid, but no longer applicable: recorded with the reason, state unchanged."""
    return Outcome(state, [], SignalFate.IGNORED, reason)


def rejected(state: RunState, reason: str) -> Outcome:
    """Invalid for this run: recorded with the reason, state unchanged."""
    return Outcome(state, [], SignalFate.REJECTED, reason)


def pending(state: RunState, reason: str) -> Outcome:
    """Not yet: the signal stays in the inbox and is offered again later."""
    return Outcome(state, [], SignalFate.PENDING, reason)
