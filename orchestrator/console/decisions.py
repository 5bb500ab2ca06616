"""A reviewer's decision in one action: the approval event and, for an approval, the
signal naming it. The form's key makes it happen once: a double click, or the browser
posting the form again, replays the first outcome instead of recording a second event."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind
from orchestrator.lifecycle.approval_checks import ApprovalDecision
from orchestrator.service.apikeys import Principal
from orchestrator.service.approval_events import record_approval
from orchestrator.service.fates import await_fate
from orchestrator.service.idempotency import StoredResponse, once, request_hash
from orchestrator.service.producer import send_signal

SIGNAL_FOR = {kind: signal for signal, kind in APPROVAL_SIGNALS.items()}
FATE_WAIT_S = 5.0


@dataclass(frozen=True)
class Decided:
    event_id: str
    decision: str
    fate: str
    """The approval signal's fate (applied, pending, ...); a rejection's is `recorded`."""
    reason: str | None
    replayed: bool


def decide(
    principal: Principal,
    run_id: uuid.UUID,
    kind: ArtifactKind,
    version: int,
    *,
    decision: ApprovalDecision,
    role: str | None,
    comment: str | None,
    key: str,
) -> Decided:
    actor = principal.actor
    idempotency_key = f"console-decision:{key}"

    def action() -> StoredResponse:
        event = record_approval(
            actor,
            run_id,
            kind.value,
            version,
            decision=decision.value,
            approver_role=role,
            comment=comment,
        )
        fate, reason = "recorded", None
        if decision is ApprovalDecision.APPROVED:
            receipt = send_signal(
                actor, run_id, SIGNAL_FOR[kind], idempotency_key, approval_event_id=event.id
            )
            receipt = await_fate(actor, receipt, FATE_WAIT_S)
            fate, reason = receipt.fate.value, receipt.reason
        return StoredResponse(
            201,
            {"event_id": str(event.id), "decision": decision.value, "fate": fate, "reason": reason},
            {},
        )

    fingerprint = request_hash(
        "POST",
        f"/console/runs/{run_id}/decision",
        {
            "kind": kind.value,
            "version": version,
            "decision": decision.value,
            "role": role,
            "comment": comment,
        },
    )
    outcome, replayed = once(principal.tenant_id, idempotency_key, fingerprint, action)
    body = outcome.body
    return Decided(
        event_id=body["event_id"],
        decision=body["decision"],
        fate=body["fate"],
        reason=body.get("reason"),
        replayed=replayed,
    )
