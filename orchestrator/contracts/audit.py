"""Audit event types: the spec's nine, plus those the fleet adds."""

from __future__ import annotations

from enum import StrEnum


class AuditEventType(StrEnum):
    # The spec's events.
    LIFECYCLE_WORKFLOW_STARTED = "lifecycle_workflow_started"
    LIFECYCLE_WORKFLOW_STEP_STARTED = "lifecycle_workflow_step_started"
    LIFECYCLE_WORKFLOW_STEP_COMPLETED = "lifecycle_workflow_step_completed"
    LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL = "lifecycle_workflow_waiting_for_approval"
    LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED = "lifecycle_workflow_signal_received"
    LIFECYCLE_WORKFLOW_BLOCKED = "lifecycle_workflow_blocked"
    LIFECYCLE_WORKFLOW_CANCELLED = "lifecycle_workflow_cancelled"
    LIFECYCLE_WORKFLOW_RESUMED = "lifecycle_workflow_resumed"
    LIFECYCLE_WORKFLOW_COMPLETED = "lifecycle_workflow_completed"
    # Raised by the sweeps (approval waits, SLA, staleness, lost jobs).
    LIFECYCLE_WORKFLOW_APPROVAL_REMINDER_SENT = "lifecycle_workflow_approval_reminder_sent"
    LIFECYCLE_WORKFLOW_APPROVAL_ESCALATED = "lifecycle_workflow_approval_escalated"
    LIFECYCLE_WORKFLOW_SLA_BREACHED = "lifecycle_workflow_sla_breached"
    LIFECYCLE_WORKFLOW_STALE = "lifecycle_workflow_stale"
    LIFECYCLE_WORKFLOW_JOB_REDISPATCHED = "lifecycle_workflow_job_redispatched"
    LIFECYCLE_WORKFLOW_JOB_DEAD_LETTERED = "lifecycle_workflow_job_dead_lettered"
    # Added by the fleet.
    LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT = "lifecycle_workflow_waiting_for_input"
    LIFECYCLE_WORKFLOW_SIGNAL_IGNORED = "lifecycle_workflow_signal_ignored"
    LIFECYCLE_WORKFLOW_SIGNAL_REJECTED = "lifecycle_workflow_signal_rejected"
    LIFECYCLE_WORKFLOW_APPROVAL_ACCEPTED = "lifecycle_workflow_approval_accepted"
    LIFECYCLE_WORKFLOW_JOB_ENQUEUED = "lifecycle_workflow_job_enqueued"
    LIFECYCLE_WORKFLOW_STEP_FAILED = "lifecycle_workflow_step_failed"
    LIFECYCLE_WORKFLOW_FAILED = "lifecycle_workflow_failed"
    LIFECYCLE_WORKFLOW_ARTIFACT_REJECTED = "lifecycle_workflow_artifact_rejected"
    LIFECYCLE_WORKFLOW_ARTIFACT_AMENDED = "lifecycle_workflow_artifact_amended"
    LIFECYCLE_WORKFLOW_STEP_RETRIED = "lifecycle_workflow_step_retried"
    LIFECYCLE_WORKFLOW_STEP_REPROCESSED = "lifecycle_workflow_step_reprocessed"
    # A reviewer amended how a document was judged (its kind, or whether it was adopted).
    LIFECYCLE_WORKFLOW_DOCUMENT_JUDGEMENT_AMENDED = "lifecycle_workflow_document_judgement_amended"
    LIFECYCLE_WORKFLOW_EVIDENCE_REMINDER_SENT = "lifecycle_workflow_evidence_reminder_sent"
    LIFECYCLE_WORKFLOW_EVIDENCE_EXPIRED = "lifecycle_workflow_evidence_expired"
    LIFECYCLE_WORKFLOW_EVIDENCE_REQUEST_OVERDUE = "lifecycle_workflow_evidence_request_overdue"
    LIFECYCLE_WORKFLOW_EVIDENCE_REQUEST_ESCALATED = "lifecycle_workflow_evidence_request_escalated"
    # An assessment adopted another catalogue version (continuous assessment).
    LIFECYCLE_WORKFLOW_CATALOGUE_ADOPTED = "lifecycle_workflow_catalogue_adopted"
    # Effects outside the database (docs/engine.md): made, handed to a person, undone.
    LIFECYCLE_WORKFLOW_EFFECT_PERFORMED = "lifecycle_workflow_effect_performed"
    LIFECYCLE_WORKFLOW_HANDOFF_OPENED = "lifecycle_workflow_handoff_opened"
    LIFECYCLE_WORKFLOW_HANDOFF_CLAIMED = "lifecycle_workflow_handoff_claimed"
    LIFECYCLE_WORKFLOW_HANDOFF_RESOLVED = "lifecycle_workflow_handoff_resolved"
    LIFECYCLE_WORKFLOW_COMPENSATION_STARTED = "lifecycle_workflow_compensation_started"
    LIFECYCLE_WORKFLOW_EFFECT_COMPENSATED = "lifecycle_workflow_effect_compensated"
    # The run moved to another lifecycle definition; the run's authority changed hands.
    LIFECYCLE_WORKFLOW_DEFINITION_MIGRATED = "lifecycle_workflow_definition_migrated"
    LIFECYCLE_WORKFLOW_AUTHORITY_CHANGED = "lifecycle_workflow_authority_changed"
    # Review work in the console: a gate's review claimed, released or lapsed; a comment.
    LIFECYCLE_WORKFLOW_REVIEW_CLAIMED = "lifecycle_workflow_review_claimed"
    LIFECYCLE_WORKFLOW_REVIEW_RELEASED = "lifecycle_workflow_review_released"
    LIFECYCLE_WORKFLOW_REVIEW_CLAIM_LAPSED = "lifecycle_workflow_review_claim_lapsed"
    LIFECYCLE_WORKFLOW_REVIEW_COMMENTED = "lifecycle_workflow_review_commented"
    # Another person took a held claim over, explicitly; its holder is told.
    LIFECYCLE_WORKFLOW_REVIEW_CLAIM_TAKEN_OVER = "lifecycle_workflow_review_claim_taken_over"
    # A reassessment's job failed (its reason kept), and a person sent it again.
    LIFECYCLE_WORKFLOW_REASSESSMENT_FAILED = "lifecycle_workflow_reassessment_failed"
    LIFECYCLE_WORKFLOW_REASSESSMENT_RETRIED = "lifecycle_workflow_reassessment_retried"
    # The organisation's risk register (ISO/IEC 27001 6.1.2, 6.1.3): each change a version.
    LIFECYCLE_WORKFLOW_RISK_RECORDED = "lifecycle_workflow_risk_recorded"
    LIFECYCLE_WORKFLOW_RISK_REVISED = "lifecycle_workflow_risk_revised"
    LIFECYCLE_WORKFLOW_RISK_ACCEPTED = "lifecycle_workflow_risk_accepted"
    # A risk a gap finding proposed, decided by a person: a new risk, merged, or rejected.
    LIFECYCLE_WORKFLOW_RISK_PROPOSAL_ACCEPTED = "lifecycle_workflow_risk_proposal_accepted"
    LIFECYCLE_WORKFLOW_RISK_PROPOSAL_MERGED = "lifecycle_workflow_risk_proposal_merged"
    LIFECYCLE_WORKFLOW_RISK_PROPOSAL_REJECTED = "lifecycle_workflow_risk_proposal_rejected"


SYSTEM_ACTOR = "system:orchestrator"
