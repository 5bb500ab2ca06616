"""Effects outside the database, on the embedded database with a real HTTP receiver.

A report draft is published to the tenant's export target; a publication whose answer
never comes is a handoff (the run waits there; one resolution, under a fence); a rejected,
superseded or cancelled version has its publication retracted and its approval request
withdrawn, once; a revoked key stops new publications with the reason. The run is driven
in this process (instant jobs, the coordinator called directly); effects are made with
the worker's own function.
"""

from __future__ import annotations

import pytest
from sqlalchemy import select

from orchestrator.contracts.errors import HandoffConflict, InvalidInput, SignalRejected
from orchestrator.contracts.external_effects import EffectStatus
from orchestrator.contracts.identity import Actor
from orchestrator.db.effect_models import ExternalEffect
from orchestrator.db.ops_models import Notification, NotificationDelivery
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.notifications import signing
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.service.adoption import adopt_run
from orchestrator.service.apikeys import authenticate, create_key, revoke_key
from orchestrator.service.approval_events import record_approval
from orchestrator.service.authority import RunAuthority
from orchestrator.service.documents import upload_document
from orchestrator.service.handoffs import claim_handoff, list_handoffs, resolve_handoff
from orchestrator.service.operations import cancel_run, request_new_version, resume_run
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from tests.support.outside_effects import REPORT_WAIT, at_report, effects, make_due
from tests.support.sweeps import (
    Clock,
    audit_counts,
    count,
    drive_to,
    new_tenant,
    no_kick,
    start_run,
)
from tests.support.webhook_receiver import Receiver, webhook_receiver


def test_a_report_draft_is_published_once_to_each_export_target(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    target = add_export_target(owner, receiver.url)
    run_id = start_run(owner)
    drive_to(reviewer, run_id, REPORT_WAIT)

    [export] = effects(owner, run_id)
    assert (export.kind, export.artifact_kind, export.artifact_version) == ("export", "report", 1)
    assert perform_effect(export.id) is EffectStatus.SUCCEEDED
    assert perform_effect(export.id) is None  # made: a second delivery does nothing

    [sent] = receiver.received
    body = receiver.bodies()[0]
    assert body["type"] == "export.published" and body["id"] == str(export.id)
    assert body["data"]["artifact"]["kind"] == "report" and body["data"]["content"]
    assert sent.headers["Idempotency-Key"] == str(export.id)
    assert target.secret is not None
    signature = sent.headers[signing.SIGNATURE_HEADER]
    signing.verify(target.secret, signature, sent.body, now=quick.now.timestamp())
    assert audit_counts(run_id)["lifecycle_workflow_effect_performed"] == 1


def test_no_answer_after_sending_is_a_handoff_the_run_waits_at_and_one_resolution_ends(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    subscribe(owner, receiver.url + "/events", event_types=["handoff.opened"])
    run_id = at_report(owner, reviewer, receiver.url)
    receiver.stalled.set()

    [export] = effects(owner, run_id)
    assert perform_effect(export.id) is EffectStatus.OUTCOME_UNKNOWN  # not idempotent: no retry
    [handoff] = list_handoffs(owner, run_id=run_id)
    assert handoff.reason == "outcome_unknown" and handoff.owner == owner.actor_id
    assert handoff.allowed_actions == ["confirm_effect", "confirm_absent", "cancel"]
    coordinate(run_id)
    blocked = get_run(owner, run_id)
    assert blocked.status == "blocked" and str(handoff.id) in (blocked.reason or "")
    with pytest.raises(SignalRejected, match="resolve it"):
        resume_run(owner, run_id, reason="skip it", idempotency_key="resume", kick=no_kick)
    with transaction() as session:
        told = session.scalars(
            select(Notification).where(Notification.event_type == "handoff.opened")
        ).one()
    assert told.payload["owner"] == owner.actor_id and told.payload["handoff_id"] == str(handoff.id)
    assert count(NotificationDelivery, NotificationDelivery.notification_id == told.id) == 1

    with pytest.raises(InvalidInput, match="not offered"):
        resolve_handoff(owner, handoff.id, "retry", comment="just send it", kick=no_kick)
    with pytest.raises(InvalidInput, match="evidence reference or a comment"):
        resolve_handoff(owner, handoff.id, "confirm_effect", kick=no_kick)
    done = resolve_handoff(
        owner, handoff.id, "confirm_effect", evidence_ref="GRC-4411", kick=no_kick
    )
    with pytest.raises(HandoffConflict, match=f"resolved by {owner.actor_id}"):
        resolve_handoff(reviewer, handoff.id, "confirm_absent", comment="no", kick=no_kick)

    assert (done.status, done.action, done.evidence_ref) == (
        "resolved",
        "confirm_effect",
        "GRC-4411",
    )
    coordinate(run_id)
    assert get_run(owner, run_id).status == "waiting_for_approval"
    assert effects(owner, run_id)[0].status == "confirmed"
    counts = audit_counts(run_id)
    assert counts["lifecycle_workflow_handoff_opened"] == 1
    assert counts["lifecycle_workflow_handoff_resolved"] == 1
    assert counts["lifecycle_workflow_effect_performed"] == 1  # confirmed, by a person
    assert len(receiver.received) == 1  # the export, sent once


def test_a_claim_fences_out_other_operators_until_it_lapses(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    ana, rui = Actor(owner.tenant_id, "user:ana"), Actor(owner.tenant_id, "user:rui")
    run_id = at_report(owner, reviewer, receiver.url)
    receiver.stalled.set()
    perform_effect(effects(owner, run_id)[0].id)
    [handoff] = list_handoffs(owner, run_id=run_id)

    first = claim_handoff(ana, handoff.id)
    with pytest.raises(HandoffConflict, match="claimed by user:ana"):
        claim_handoff(rui, handoff.id)
    with pytest.raises(HandoffConflict, match="claimed by user:ana"):
        resolve_handoff(rui, handoff.id, "cancel", comment="mine now", kick=no_kick)
    quick.advance(seconds=901)  # the claim lapsed
    second = claim_handoff(rui, handoff.id)
    assert second.fence > first.fence
    with pytest.raises(HandoffConflict, match="stale"):
        resolve_handoff(ana, handoff.id, "cancel", comment="late", fence=first.fence, kick=no_kick)
    resolved = resolve_handoff(
        rui, handoff.id, "cancel", comment="do not publish", fence=second.fence, kick=no_kick
    )
    assert (resolved.resolved_by, resolved.action) == ("user:rui", "cancel")
    assert effects(owner, run_id)[0].status == "cancelled"


def test_confirmed_absent_is_made_again_and_an_idempotent_target_is_retried_unasked(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    run_id = at_report(owner, reviewer, receiver.url)
    receiver.stalled.set()
    [export] = effects(owner, run_id)
    perform_effect(export.id)
    [handoff] = list_handoffs(owner, run_id=run_id)
    receiver.stalled.clear()

    resolve_handoff(owner, handoff.id, "confirm_absent", comment="not in the store", kick=no_kick)
    assert perform_effect(export.id) is EffectStatus.SUCCEEDED
    assert effects(owner, run_id)[0].status == "succeeded"

    with webhook_receiver() as idempotent:
        other_owner, other_reviewer = new_tenant()
        other = at_report(other_owner, other_reviewer, idempotent.url, idempotent=True)
        idempotent.stalled.set()
        [again] = effects(other_owner, other)
        assert perform_effect(again.id) is EffectStatus.PENDING  # repeating it is harmless
        assert perform_effect(again.id) is EffectStatus.OUTCOME_UNKNOWN  # out of attempts
        [handoff] = list_handoffs(other_owner, run_id=other)
        assert "retry" in handoff.allowed_actions


def test_a_rejected_report_has_its_publication_retracted_and_its_request_withdrawn_once(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    subscription = subscribe(owner, receiver.url + "/events", event_types=["approval.requested"])
    run_id = at_report(owner, reviewer, receiver.url)
    [export] = effects(owner, run_id)
    assert perform_effect(export.id) is EffectStatus.SUCCEEDED

    record_approval(reviewer, run_id, "report", 1, decision="rejected", comment="wrong scope")
    coordinate(run_id)
    undo = {e.kind: e for e in effects(owner, run_id) if e.compensates_id is not None}
    assert set(undo) == {"export_retraction", "approval_withdrawal"}
    assert undo["export_retraction"].compensates_id == export.id
    assert undo["approval_withdrawal"].target_id == subscription.id
    assert make_due(owner, run_id) == [EffectStatus.SUCCEEDED] * 2
    assert make_due(owner, run_id) == []

    by_type = {body["type"]: body for body in receiver.bodies()}
    assert by_type["export.retracted"]["data"]["retracts"] == str(export.id)
    assert by_type["export.retracted"]["data"]["reason"] == "rejected"
    withdrawn = by_type["approval.withdrawn"]["data"]
    assert (withdrawn["gate"], withdrawn["version"]) == ("report", 1)
    assert len(receiver.received) == 3  # export, retraction, withdrawal: each once
    assert {e.id: e.status for e in effects(owner, run_id)}[export.id] == "compensated"
    counts = audit_counts(run_id)
    assert counts["lifecycle_workflow_compensation_started"] == 1
    assert counts["lifecycle_workflow_effect_compensated"] == 2

    # The next version is published in its turn; nothing of v1 is undone twice.
    request_new_version(
        owner, run_id, "report", reason="rescope", idempotency_key="v2", kick=no_kick
    )
    drive_to(reviewer, run_id, REPORT_WAIT)
    v2 = [e for e in effects(owner, run_id, "export") if e.artifact_version == 2]
    assert len(v2) == 1 and len(effects(owner, run_id, "export_retraction")) == 1


def test_cancelling_a_run_retracts_what_it_published_and_a_failed_undo_is_a_handoff(
    quick: Clock,
) -> None:
    owner, reviewer = new_tenant()
    with webhook_receiver(204, 500, 500) as target:
        run_id = at_report(owner, reviewer, target.url)
        assert make_due(owner, run_id) == [EffectStatus.SUCCEEDED]
        cancel_run(owner, run_id, reason="client withdrew", idempotency_key="cancel", kick=no_kick)
        coordinate(run_id)
        [retraction] = effects(owner, run_id, "export_retraction")
        assert retraction.undo_reason == "cancelled"
        assert perform_effect(retraction.id) is EffectStatus.PENDING  # 500: tried again
        assert perform_effect(retraction.id) is EffectStatus.FAILED
    [handoff] = list_handoffs(owner, run_id=run_id)
    assert handoff.reason == "effect_failed" and handoff.effect_kind == "export_retraction"
    assert handoff.allowed_actions == ["retry", "confirm_effect", "cancel"]
    resolve_handoff(owner, handoff.id, "confirm_effect", evidence_ref="ticket 7", kick=no_kick)
    kinds = {e.kind: e.status for e in effects(owner, run_id)}
    assert kinds == {"export": "compensated", "export_retraction": "confirmed"}
    assert get_run(owner, run_id).status == "cancelled"


def test_a_revoked_key_stops_new_publications_until_someone_adopts_the_run(
    quick: Clock, receiver: Receiver
) -> None:
    owner, reviewer = new_tenant()
    view, key = create_key(owner.tenant_id, owner.actor_id, ["signal", "read"])
    principal = authenticate(key)
    assert principal is not None
    add_export_target(owner, receiver.url)
    assessment = create_assessment(owner, "org-1", "Authority")
    upload_document(owner, assessment.id, "p.md", b"# Policy\n\nMFA everywhere.", kick=no_kick)
    run = start_lifecycle(
        owner,
        assessment.id,
        "authority",
        kick=no_kick,
        authority=RunAuthority.of_principal(principal),
    )
    assert run.authority == {
        "principal": owner.actor_id,
        "key_id": view.key_id,
        "scopes": ["read", "signal"],
    }
    drive_to(reviewer, run.id, REPORT_WAIT)
    revoke_key(view.key_id)

    [export] = effects(owner, run.id)
    assert perform_effect(export.id) is EffectStatus.REFUSED
    assert receiver.received == []
    [handoff] = list_handoffs(owner, run_id=run.id)
    assert handoff.reason == "authority_revoked"
    assert f"API key {view.key_id} of {owner.actor_id} was revoked" in handoff.detail
    coordinate(run.id)
    assert "was revoked" in (get_run(owner, run.id).reason or "")

    operator = Actor(owner.tenant_id, "operator:sam")
    adopt_run(operator, run.id, reason="owner left", authority=RunAuthority.of_actor(operator))
    resolve_handoff(operator, handoff.id, "retry", comment="adopted by sam", kick=no_kick)
    assert perform_effect(export.id) is EffectStatus.SUCCEEDED
    coordinate(run.id)
    assert get_run(owner, run.id).status == "waiting_for_approval"
    assert audit_counts(run.id)["lifecycle_workflow_authority_changed"] == 1


def test_an_effect_whose_worker_was_lost_is_a_handoff_unless_repeating_it_is_harmless(
    quick: Clock, receiver: Receiver
) -> None:
    from orchestrator.notifications.effect_sweep import sweep_effects

    owner, reviewer = new_tenant()
    run_id = at_report(owner, reviewer, receiver.url)
    [export] = effects(owner, run_id)
    with transaction() as session:  # a worker claimed it, then died mid-request
        row = session.get(ExternalEffect, export.id)
        assert row is not None
        row.status, row.attempts, row.next_attempt_at = "performing", 1, quick.now
    quick.advance(seconds=1)

    assert sweep_effects().lapsed == 1
    assert effects(owner, run_id)[0].status == "outcome_unknown"
    [handoff] = list_handoffs(owner, run_id=run_id)
    assert "worker making it was lost" in handoff.detail
    assert sweep_effects().lapsed == 0
