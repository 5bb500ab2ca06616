"""Documents uploaded while ingestion runs are read by another attempt, never dropped.

The attempt that was running may have read the documents before the upload landed; the
lifecycle cannot know, so that attempt's end (success, or "no text" failure) leads to one
more attempt before the run moves on or waits for documents again.
"""

from __future__ import annotations

from orchestrator.contracts.signals import SignalFate
from orchestrator.contracts.signals import SignalType as S
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import (
    drive_to,
    enqueued,
    job_done,
    job_failed,
    reloaded,
    signal,
    step_changes,
)


def _upload(state: RunState) -> RunState:
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED, {"document_id": "d-2"}))
    assert decision.fate is SignalFate.APPLIED
    assert decision.state.uploads_during_ingestion
    assert enqueued(decision) == [], "the running attempt keeps running"
    return decision.state


def test_no_text_with_an_upload_during_the_attempt_ingests_again() -> None:
    state = _upload(drive_to(Step.INGEST_DOCUMENTS))
    decision = decide(
        state, job_failed(state, code="no_extractable_text", message="scan.pdf has no text")
    )

    assert decision.fate is SignalFate.APPLIED
    assert (decision.state.step, decision.state.status) == (
        Step.INGEST_DOCUMENTS,
        WorkflowStatus.RUNNING,
    )
    assert decision.state.attempt(Step.INGEST_DOCUMENTS) == 2
    assert [job.attempt for job in enqueued(decision)] == [2]
    assert [(c.attempt, c.status) for c in step_changes(decision, step=Step.INGEST_DOCUMENTS)] == [
        (1, StepStatus.FAILED),
        (2, StepStatus.RUNNING),
    ]
    assert not decision.state.uploads_during_ingestion and decision.state.reason is None


def test_success_with_an_upload_during_the_attempt_ingests_again_before_indexing() -> None:
    state = _upload(drive_to(Step.INGEST_DOCUMENTS))
    decision = decide(state, job_done(state))

    assert decision.state.step is Step.INGEST_DOCUMENTS
    assert [job.attempt for job in enqueued(decision)] == [2]
    assert [(c.attempt, c.status) for c in step_changes(decision, step=Step.INGEST_DOCUMENTS)] == [
        (1, StepStatus.COMPLETED),
        (2, StepStatus.RUNNING),
    ]
    # The next attempt, with no upload during it, moves on as usual.
    after = decide(decision.state, job_done(decision.state))
    assert after.state.step is Step.INDEX_KB


def test_without_uploads_during_the_attempt_nothing_changes() -> None:
    state = drive_to(Step.INGEST_DOCUMENTS)
    failed = decide(state, job_failed(state, code="no_extractable_text"))
    assert failed.state.step is Step.WAIT_FOR_DOCUMENTS
    assert decide(state, job_done(state)).state.step is Step.INDEX_KB


def test_uploads_after_ingestion_completed_are_still_ignored() -> None:
    state = drive_to(Step.INDEX_KB)
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED))
    assert decision.fate is SignalFate.IGNORED and decision.state == state


def test_the_mark_survives_the_run_row() -> None:
    state = _upload(drive_to(Step.INGEST_DOCUMENTS))
    stored = reloaded(state)
    assert stored == state
