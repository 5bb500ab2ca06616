"""What the producer and the coordinator report: one log line and the counters per event.

Each function is called with one line from the code that knows the event. The
coordinator's decisions are reported only once its transaction commits (a rolled back
wake-up is retried and would otherwise count twice).
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Protocol

from sqlalchemy import event
from sqlalchemy.orm import Session

from orchestrator.contracts.signals import SignalEnvelope
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import Decision
from orchestrator.lifecycle.effects import StepChanged
from orchestrator.lifecycle.state import RunState
from orchestrator.observability import metrics
from orchestrator.observability.context import bound, enrich

log = logging.getLogger("orchestrator.signals")

_ENTERED = (StepStatus.RUNNING, StepStatus.WAITING)
_PENDING_KEY = "lifecycle_observed_decisions"


def signal_context(envelope: SignalEnvelope) -> dict[str, Any]:
    return {
        "trace_id": envelope.trace_id,
        "run_id": envelope.run_id,
        "tenant": envelope.tenant_id,
        "step": envelope.step.value if envelope.step else None,
    }


def signal_recorded(envelope: SignalEnvelope, fate: str, duplicate: bool) -> None:
    """A signal reached the inbox (producer side). The caller's context takes its trace,
    so the coordinator message sent next carries it."""
    enrich(**signal_context(envelope))
    if not duplicate:
        metrics.signal_recorded(envelope.type.value, fate)
    log.info(
        "signal recorded",
        extra={
            "signal_type": envelope.type.value,
            "signal_id": str(envelope.signal_id),
            "fate": fate,
            "duplicate": duplicate,
        },
    )


def decided(
    session: Session, envelope: SignalEnvelope, decision: Decision, before: RunState
) -> None:
    """The coordinator decided a signal; reported after its transaction commits."""
    pending: list[tuple[SignalEnvelope, Decision, RunState]] | None = session.info.get(_PENDING_KEY)
    if pending is None:
        pending = session.info[_PENDING_KEY] = []
        event.listen(session, "after_commit", _report, once=True)
        event.listen(session, "after_rollback", _forget, once=True)
    pending.append((envelope, decision, before))


def _forget(session: Session) -> None:
    session.info.pop(_PENDING_KEY, None)


def _report(session: Session) -> None:
    for envelope, decision, before in session.info.pop(_PENDING_KEY, []):
        _report_one(envelope, decision, before)


def _report_one(envelope: SignalEnvelope, decision: Decision, before: RunState) -> None:
    after = decision.state
    metrics.signal_decided(envelope.type.value, decision.fate.value)
    if after.status is not before.status:
        metrics.status_changed(before.status.value, after.status.value)
    for effect in decision.effects:
        if isinstance(effect, StepChanged) and effect.status in _ENTERED:
            metrics.step_entered(effect.step.value)
    context = signal_context(envelope)
    context["step"] = after.step or before.step or envelope.step or ""
    with bound(**context):
        log.info(
            "signal %s",
            decision.fate.value,
            extra={
                "signal_type": envelope.type.value,
                "signal_id": str(envelope.signal_id),
                "fate": decision.fate.value,
                "reason": decision.reason,
                "status_before": before.status.value,
                "status": after.status.value,
            },
        )


class StartedRun(Protocol):
    """What the producer knows of a run it just created (its read model)."""

    @property
    def id(self) -> uuid.UUID: ...

    @property
    def trace_id(self) -> str: ...

    @property
    def tenant_id(self) -> str: ...

    @property
    def assessment_id(self) -> uuid.UUID: ...


def run_started(run: StartedRun) -> None:
    """A run and its start signal were created (producer side)."""
    enrich(trace_id=run.trace_id, run_id=run.id, tenant=run.tenant_id, step=None)
    metrics.signal_recorded("workflow_start_requested", "pending")
    log.info("run started", extra={"assessment_id": str(run.assessment_id)})
