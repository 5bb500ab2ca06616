"""When ingestion finds no text at all, the run waits for documents instead of failing."""

from __future__ import annotations

import pytest

from orchestrator.contracts.signals import SignalType
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from tests.support.decisions import drive_to, enqueued, job_failed, signal, step_changes


@pytest.mark.parametrize("code", ["no_extractable_text", "no_documents"])
def test_no_text_returns_the_run_to_the_documents_wait(code: str) -> None:
    state = drive_to(Step.INGEST_DOCUMENTS)
    decision = decide(state, job_failed(state, code=code, message="nothing readable"))

    assert decision.state.status is WorkflowStatus.WAITING_FOR_INPUT
    assert decision.state.step is Step.WAIT_FOR_DOCUMENTS
    assert decision.state.reason == f"{code}: nothing readable"
    assert [(c.step, c.status) for c in step_changes(decision)] == [
        (Step.INGEST_DOCUMENTS, StepStatus.FAILED),
        (Step.WAIT_FOR_DOCUMENTS, StepStatus.RUNNING),
        (Step.WAIT_FOR_DOCUMENTS, StepStatus.WAITING),
    ]

    uploaded = decide(decision.state, signal(decision.state, SignalType.DOCUMENTS_UPLOADED))
    assert uploaded.state.step is Step.INGEST_DOCUMENTS
    assert uploaded.state.attempt(Step.INGEST_DOCUMENTS) == 2
    assert [job.attempt for job in enqueued(uploaded)] == [2]


def test_other_job_failures_still_fail_the_run() -> None:
    state = drive_to(Step.INGEST_DOCUMENTS)
    decision = decide(state, job_failed(state, code="storage_unavailable"))
    assert decision.state.status is WorkflowStatus.FAILED
    later = drive_to(Step.INDEX_KB)
    assert (
        decide(later, job_failed(later, code="no_extractable_text")).state.status
        is WorkflowStatus.FAILED
    )
