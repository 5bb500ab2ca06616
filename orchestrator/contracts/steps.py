"""The 20 lifecycle steps, in the spec's order, and what kind of work each one is."""

from __future__ import annotations

from enum import StrEnum


class AssessmentLifecycleStep(StrEnum):
    """Steps of the SCF-based assessment lifecycle, in execution order."""

    VALIDATE_ASSESSMENT = "validate_assessment"
    WAIT_FOR_DOCUMENTS = "wait_for_documents"
    INGEST_DOCUMENTS = "ingest_documents"
    INDEX_KB = "index_kb"
    RUN_SCF_PRE_ANALYSIS = "run_scf_pre_analysis"
    WAIT_FOR_FRAMEWORK_SELECTION = "wait_for_framework_selection"
    CREATE_SCOPE = "create_scope"
    CREATE_SOA_DRAFT = "create_soa_draft"
    WAIT_FOR_SOA_APPROVAL = "wait_for_soa_approval"
    INGEST_SOA = "ingest_soa"
    RUN_EVIDENCE_ANALYSIS = "run_evidence_analysis"
    CREATE_GAP_ANALYSIS = "create_gap_analysis"
    WAIT_FOR_GAP_APPROVAL = "wait_for_gap_approval"
    CREATE_MATURITY_ASSESSMENT = "create_maturity_assessment"
    WAIT_FOR_MATURITY_APPROVAL = "wait_for_maturity_approval"
    CREATE_POAM = "create_poam"
    WAIT_FOR_POAM_APPROVAL = "wait_for_poam_approval"
    CREATE_REPORT = "create_report"
    WAIT_FOR_REPORT_APPROVAL = "wait_for_report_approval"
    CLOSE_ASSESSMENT = "close_assessment"

    @property
    def order(self) -> int:
        return STEP_ORDER.index(self)

    def next(self) -> AssessmentLifecycleStep | None:
        position = self.order + 1
        return STEP_ORDER[position] if position < len(STEP_ORDER) else None


STEP_ORDER: tuple[AssessmentLifecycleStep, ...] = tuple(AssessmentLifecycleStep)


class StepKind(StrEnum):
    """How a step gets its work done."""

    INLINE = "inline"
    """Decided by the coordinator itself, inside the signal's transaction."""
    JOB = "job"
    """A heavy job on a worker queue that posts a completion signal back."""
    WAIT_FOR_INPUT = "wait_for_input"
    """Waits for information from a person (documents, a framework choice)."""
    WAIT_FOR_APPROVAL = "wait_for_approval"
    """Waits for a validated human approval; never granted by the system."""


class StepStatus(StrEnum):
    """Status of one execution of one step."""

    RUNNING = "running"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    SUPERSEDED = "superseded"
    """Replaced by a later attempt after a retry or a controlled reprocess."""
