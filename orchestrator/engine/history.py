"""A run's decision history, kept as a file and replayed through decide().

The history lists every signal the run decided, in the order it was decided (the audit
trail's order), each with the approval event as that decision saw it, and what the
decision made of it: the fate and reason, the state after, the effects. Exporting checks
the history against the database (each fate as recorded, the last state as stored), so a
file is a faithful record of a real run. Replaying a file through today's decide() finds
the first decision that comes out differently: a rule change that alters a recorded run.
Regenerating rewrites the expectations from today's rules (on purpose, after review).
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Mapping
from enum import Enum
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.errors import FleetError
from orchestrator.contracts.signals import ArtifactKind, SignalEnvelope, SignalType
from orchestrator.db.models import ApprovalEvent, AuditEvent, InboxSignal, WorkflowRun
from orchestrator.engine.coordinator import approval_view
from orchestrator.engine.run_rows import state_of
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import Decision, decide
from orchestrator.lifecycle.state import RunState

HISTORY_FORMAT = 1
_DECIDED = (
    AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED.value,
    AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED.value,
    AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED.value,
)


class HistoryMismatch(FleetError, AssertionError):
    """The run's decisions do not reproduce what the database recorded."""


def export_history(session: Session, run_id: uuid.UUID) -> dict[str, Any]:
    run = session.get(WorkflowRun, run_id)
    if run is None:
        raise LookupError(f"run {run_id} not found")
    order = [
        uuid.UUID(metadata["signal_id"])
        for metadata in session.scalars(
            select(AuditEvent.event_metadata)
            .where(AuditEvent.run_id == run_id, AuditEvent.event_type.in_(_DECIDED))
            .order_by(AuditEvent.id)
        )
    ]
    inbox = {
        row.signal_id: row
        for row in session.scalars(select(InboxSignal).where(InboxSignal.signal_id.in_(order)))
    }
    envelopes = {sid: SignalEnvelope.model_validate(inbox[sid].envelope) for sid in order}
    seen = _approvals_as_seen(session, order, envelopes)
    history: dict[str, Any] = {
        "format": HISTORY_FORMAT,
        "run": _identity(first_state_of(run)),
        "decisions": [],
    }
    state = first_state_of(run)
    for sid in order:
        decision = decide(state, envelopes[sid], seen.get(sid))
        if decision.fate.value != inbox[sid].fate:
            raise HistoryMismatch(
                f"signal {sid} was {inbox[sid].fate}, deciding it again gives {decision.fate}"
            )
        history["decisions"].append(
            {
                "signal": envelopes[sid].model_dump(mode="json"),
                "approval": _approval_json(seen.get(sid)),
                "expected": expected_of(decision),
            }
        )
        state = decision.state
    if state != state_of(run):
        raise HistoryMismatch(f"the decisions of run {run_id} do not land on its stored state")
    history["definition"] = {"version": state.definition_version, "hash": state.definition_hash}
    return history


def first_state_of(run: Any) -> RunState:
    return RunState(
        run_id=run.id,
        tenant_id=run.tenant_id,
        organization_id=run.organization_id,
        assessment_id=run.assessment_id,
    )


def _approvals_as_seen(
    session: Session, order: list[uuid.UUID], envelopes: Mapping[uuid.UUID, SignalEnvelope]
) -> dict[uuid.UUID, ApprovalView]:
    """Each signal's approval event as its decision saw it: used only if another signal,
    decided before it, consumed the event."""
    named = {e.approval_event_id for e in envelopes.values() if e.approval_event_id}
    rows = {
        row.id: row
        for row in session.scalars(select(ApprovalEvent).where(ApprovalEvent.id.in_(named)))
    }
    position = {sid: index for index, sid in enumerate(order)}
    seen: dict[uuid.UUID, ApprovalView] = {}
    for index, sid in enumerate(order):
        row = rows.get(envelopes[sid].approval_event_id)  # type: ignore[arg-type]
        if row is None:
            continue
        by = row.consumed_by_signal_id
        used = by is not None and by != sid and position.get(by, len(order)) < index
        seen[sid] = dataclasses.replace(approval_view(row), consumed=used)
    return seen


# --- what a decision made, as plain JSON ------------------------------------------------


def expected_of(decision: Decision) -> dict[str, Any]:
    state = decision.state
    return {
        "fate": decision.fate.value,
        "reason": decision.reason,
        "state": {
            "status": state.status.value,
            "step": state.step.value if state.step else None,
            "reason": state.reason,
            "context": state.context(),
        },
        "effects": [
            {"effect": type(effect).__name__, **_plain(dataclasses.asdict(effect))}
            for effect in decision.effects
        ],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, Mapping):
        return {str(_plain(k)): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(item) for item in value]
    return value


def _identity(state: RunState) -> dict[str, str]:
    return {
        "run_id": str(state.run_id),
        "tenant_id": state.tenant_id,
        "organization_id": state.organization_id,
        "assessment_id": str(state.assessment_id),
    }


def _approval_json(view: ApprovalView | None) -> dict[str, Any] | None:
    return None if view is None else _plain(dataclasses.asdict(view))


def _approval_of(data: Mapping[str, Any] | None) -> ApprovalView | None:
    if data is None:
        return None
    return ApprovalView(
        **{
            **data,
            "approval_event_id": uuid.UUID(data["approval_event_id"]),
            "assessment_id": uuid.UUID(data["assessment_id"]),
            "artifact_kind": ArtifactKind(data["artifact_kind"]),
            "decision": ApprovalDecision(data["decision"]),
            "approver_roles": tuple(data["approver_roles"]),
        }
    )


# --- replaying a file -------------------------------------------------------------------


def _start_state(history: Mapping[str, Any]) -> RunState:
    run = history["run"]
    return RunState(
        run_id=uuid.UUID(run["run_id"]),
        tenant_id=run["tenant_id"],
        organization_id=run["organization_id"],
        assessment_id=uuid.UUID(run["assessment_id"]),
    )


def replay(history: Mapping[str, Any]) -> list[Decision]:
    """Every recorded signal decided again, by today's rules, from the run's first state."""
    state, decisions = _start_state(history), []
    for item in history["decisions"]:
        envelope = SignalEnvelope.model_validate(item["signal"])
        decision = decide(state, envelope, _approval_of(item["approval"]))
        decisions.append(decision)
        state = decision.state
    return decisions


def first_divergence(history: Mapping[str, Any]) -> str | None:
    """Where today's rules first decide the recorded run differently, said for a person;
    None when every decision comes out as recorded."""
    if history.get("format") != HISTORY_FORMAT:
        return f"history format {history.get('format')!r}, expected {HISTORY_FORMAT}"
    for index, (item, decision) in enumerate(
        zip(history["decisions"], replay(history), strict=True)
    ):
        got, expected = expected_of(decision), item["expected"]
        if got != expected:
            return _describe(index, item["signal"]["type"], expected, got, decision.state)
    return None


def _describe(
    index: int, signal_type: str, expected: dict[str, Any], got: dict[str, Any], state: RunState
) -> str:
    where = f"decision {index} ({signal_type})"
    for part in ("fate", "reason"):
        if got[part] != expected[part]:
            return f"{where}: {part} {expected[part]!r} recorded, {got[part]!r} now"
    for field in ("status", "step", "reason"):
        if got["state"][field] != expected["state"][field]:
            recorded, now = expected["state"][field], got["state"][field]
            hint = definitions.unavailable(state)
            return f"{where}: state {field} {recorded!r} recorded, {now!r} now" + (
                f" ({hint})" if hint else ""
            )
    if got["state"] != expected["state"]:
        changed = sorted(
            key
            for key in {*got["state"]["context"], *expected["state"]["context"]}
            if got["state"]["context"].get(key) != expected["state"]["context"].get(key)
        )
        return f"{where}: the run's context differs in {', '.join(changed)}"
    recorded = [e["effect"] for e in expected["effects"]]
    now = [e["effect"] for e in got["effects"]]
    for position, (a, b) in enumerate(zip(expected["effects"], got["effects"], strict=False)):
        if a != b:
            return f"{where}: effect {position} was {a}, now {b}"
    return f"{where}: effects {recorded} recorded, {now} now"


def regenerate(history: Mapping[str, Any]) -> dict[str, Any]:
    """The same recorded signals with today's rules' expectations (on purpose). A start
    pinned to a definition whose content changed since is pinned to what is shipped now
    under that version."""
    items = [dict(item) for item in history["decisions"]]
    for item in items:
        _repin(item)
    refreshed = {**history, "decisions": items}
    state = _start_state(refreshed)
    for item, decision in zip(items, replay(refreshed), strict=True):
        item["expected"] = expected_of(decision)
        state = decision.state
    refreshed["definition"] = {"version": state.definition_version, "hash": state.definition_hash}
    return refreshed


def _repin(item: dict[str, Any]) -> None:
    signal = item["signal"]
    pin = signal.get("payload", {}).get("definition")
    if signal["type"] != SignalType.WORKFLOW_START_REQUESTED.value or not pin:
        return
    shipped = definitions.find(int(pin["version"]))
    if shipped is not None and shipped.content_hash != pin["hash"]:
        payload = {**signal["payload"], "definition": {**pin, "hash": shipped.content_hash}}
        item["signal"] = {**signal, "payload": payload}
