"""Job steps: enqueueing, completion signals, artifacts, stale outcomes, failures."""

from __future__ import annotations

import pytest

from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepStatus
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.lifecycle.effects import EnqueueJob, StepChanged
from orchestrator.lifecycle.transitions import job_id_for
from tests.support.decisions import (
    COMPLETION_SIGNALS,
    JOB_STEPS,
    E,
    Inbox,
    S,
    approval,
    audits,
    drive_to,
    enqueued,
    entered,
    job_done,
    job_failed,
    only_audits,
    outcome_payload,
    positioned,
    retry_signal,
    signal,
    signal_audits,
    step_changes,
)

PRODUCING = [s for s in JOB_STEPS if STEP_SPECS[s].produces is not None]
NOT_PRODUCING = [s for s in JOB_STEPS if STEP_SPECS[s].produces is None]


def test_eleven_job_steps_with_their_completion_signals() -> None:
    completion = {s: STEP_SPECS[s].completion_signal for s in JOB_STEPS}
    assert completion == {
        Step.INGEST_DOCUMENTS: S.DOCUMENTS_INGESTED,
        Step.INDEX_KB: S.KB_INDEXED,
        Step.RUN_SCF_PRE_ANALYSIS: S.SCF_PRE_ANALYSIS_COMPLETED,
        Step.CREATE_SCOPE: S.JOB_COMPLETED,
        Step.CREATE_SOA_DRAFT: S.JOB_COMPLETED,
        Step.INGEST_SOA: S.JOB_COMPLETED,
        Step.RUN_EVIDENCE_ANALYSIS: S.JOB_COMPLETED,
        Step.CREATE_GAP_ANALYSIS: S.JOB_COMPLETED,
        Step.CREATE_MATURITY_ASSESSMENT: S.JOB_COMPLETED,
        Step.CREATE_POAM: S.JOB_COMPLETED,
        Step.CREATE_REPORT: S.JOB_COMPLETED,
    }


def test_documents_uploaded_enqueues_the_ingestion_job() -> None:
    state = drive_to(Step.WAIT_FOR_DOCUMENTS)
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert (new.step, new.status) == (Step.INGEST_DOCUMENTS, WorkflowStatus.RUNNING)
    job_id = f"{state.run_id}:ingest_documents:1"
    assert new.active_job_id == job_id
    assert [e for e in decision.effects if isinstance(e, EnqueueJob)] == [
        EnqueueJob(
            job_id,
            JobKind.INGEST_DOCUMENTS,
            Step.INGEST_DOCUMENTS,
            1,
            {"framework": None, "frameworks": [], "catalogs": {}},
        )
    ]
    assert step_changes(decision) == [
        StepChanged(Step.WAIT_FOR_DOCUMENTS, 1, StepStatus.COMPLETED),
        StepChanged(Step.INGEST_DOCUMENTS, 1, StepStatus.RUNNING),
    ]


def test_documents_uploaded_during_ingestion_queue_no_second_job_now() -> None:
    """It marks the run for another attempt (test_uploads_during_ingestion); nothing starts
    while the current attempt runs."""
    state = drive_to(Step.INGEST_DOCUMENTS)
    decision = decide(state, signal(state, S.DOCUMENTS_UPLOADED))
    assert decision.fate is SignalFate.APPLIED
    assert decision.state == state.evolve(uploads_during_ingestion=True)
    assert enqueued(decision) == []


@pytest.mark.parametrize("step", JOB_STEPS)
def test_matching_completion_completes_the_job_step(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, job_done(state))

    assert decision.fate is SignalFate.APPLIED
    assert step_changes(decision)[0] == StepChanged(step, 1, StepStatus.COMPLETED)
    assert entered(decision)[0] is step.next()
    assert decision.state.active_job_id != state.active_job_id
    completed_audit = audits(decision, E.LIFECYCLE_WORKFLOW_STEP_COMPLETED)[0]
    assert (completed_audit.step, completed_audit.actor_id) == (step, "system:worker")


@pytest.mark.parametrize("step", JOB_STEPS)
def test_other_completion_signals_are_rejected(step: Step) -> None:
    state = drive_to(step)
    right = STEP_SPECS[step].completion_signal
    for wrong in COMPLETION_SIGNALS:
        if wrong is right:
            continue
        decision = decide(state, job_done(state, type_=wrong))
        assert decision.fate is SignalFate.REJECTED, wrong
        assert decision.state == state
        assert decision.reason == f"{step.value} completes with {right}, not {wrong.value}"
        assert [a.event_type for a in only_audits(decision)] == [
            E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED
        ]


@pytest.mark.parametrize("step", JOB_STEPS)
def test_stale_job_ids_are_ignored(step: Step) -> None:
    state = drive_to(step)
    stale_ids = [
        job_id_for(state, step, 2),  # a later attempt that was never enqueued
        "not-a-job",
    ]
    if step is not Step.INGEST_DOCUMENTS:
        previous = next(s for s in reversed(JOB_STEPS[: JOB_STEPS.index(step)]))
        stale_ids.append(job_id_for(state, previous, 1))
    for stale in stale_ids:
        decision = decide(state, job_done(state, job_id=stale))
        assert decision.fate is SignalFate.IGNORED, stale
        assert decision.reason == f"job {stale} is not the run's active job"
        assert decision.state == state
        failure = decide(state, job_failed(state, job_id=stale))
        assert failure.fate is SignalFate.IGNORED
        assert failure.state == state


@pytest.mark.parametrize("step", JOB_STEPS)
def test_a_repeated_completion_is_ignored(step: Step) -> None:
    state = drive_to(step)
    outcome = job_done(state)
    after = decide(state, outcome).state
    again = decide(after, outcome)
    assert again.fate is SignalFate.IGNORED
    assert again.state == after


@pytest.mark.parametrize("step", PRODUCING)
def test_drafting_steps_record_the_reported_artifact_version(step: Step) -> None:
    state = drive_to(step)
    kind = STEP_SPECS[step].produces
    assert kind is not None
    decision = decide(state, job_done(state, version=7))

    assert decision.fate is SignalFate.APPLIED
    assert decision.state.artifacts[kind] == 7
    assert {k: v for k, v in decision.state.artifacts.items() if k is not kind} == dict(
        state.artifacts
    )


@pytest.mark.parametrize("step", PRODUCING)
def test_drafting_steps_need_their_artifact(step: Step) -> None:
    state = drive_to(step)
    kind = STEP_SPECS[step].produces
    assert kind is not None
    completion = STEP_SPECS[step].completion_signal
    assert completion is not None
    missing = signal(state, completion, outcome_payload(state))
    wrong_kind = next(k for k in ArtifactKind if k is not kind)
    wrong = job_done(state, artifact_kind=wrong_kind)
    for envelope in (missing, wrong):
        decision = decide(state, envelope)
        assert decision.fate is SignalFate.REJECTED
        assert decision.reason == f"{step.value} must report a {kind.value} artifact"
        assert decision.state == state
        assert kind not in decision.state.artifacts


@pytest.mark.parametrize("step", NOT_PRODUCING)
def test_steps_without_a_draft_complete_without_an_artifact(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, job_done(state))
    assert decision.fate is SignalFate.APPLIED
    assert decision.state.artifacts == state.artifacts


@pytest.mark.parametrize("step", JOB_STEPS)
def test_job_failed_fails_the_step_and_the_run(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, job_failed(state, code="llm_timeout", message="model timed out"))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert new.status is WorkflowStatus.FAILED
    assert new.reason == "llm_timeout: model timed out"
    assert new.step is step
    assert new.active_job_id is None
    assert step_changes(decision) == [
        StepChanged(step, 1, StepStatus.FAILED, error="llm_timeout: model timed out")
    ]
    assert [a.event_type for a in audits(decision)] == [
        E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
        E.LIFECYCLE_WORKFLOW_STEP_FAILED,
        E.LIFECYCLE_WORKFLOW_FAILED,
    ]
    assert audits(decision, E.LIFECYCLE_WORKFLOW_STEP_FAILED)[0].metadata == {
        "job_id": state.active_job_id,
        "error_code": "llm_timeout",
    }


@pytest.mark.parametrize("step", JOB_STEPS)
def test_unsuccessful_completion_signal_also_fails(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, job_done(state, succeeded=False))
    assert decision.state.status is WorkflowStatus.FAILED
    assert decision.state.reason == "unknown: job failed without an error"


def test_after_a_failure_the_outcome_of_the_failed_job_is_ignored() -> None:
    state = drive_to(Step.INDEX_KB)
    failed = decide(state, job_failed(state)).state
    late = decide(failed, job_done(state))
    assert late.fate is SignalFate.IGNORED
    assert late.state == failed


@pytest.mark.parametrize(
    "signal_type", [S.DOCUMENTS_UPLOADED, S.FRAMEWORK_SELECTED, S.SOA_APPROVED]
)
def test_after_a_failure_other_signals_wait(signal_type: S) -> None:
    state = drive_to(Step.CREATE_SCOPE)
    failed = decide(state, job_failed(state)).state
    decision = decide(failed, signal(failed, signal_type, {"framework": "x"}))
    assert decision.fate is SignalFate.PENDING
    assert decision.effects == ()
    assert decision.state == failed


@pytest.mark.parametrize(
    "payload",
    [
        {},
        {"job_id": "x"},
        {"job_id": "x", "succeeded": True, "unexpected": 1},
    ],
)
def test_malformed_job_outcomes_are_rejected(payload: dict[str, object]) -> None:
    state = drive_to(Step.INGEST_DOCUMENTS)
    decision = decide(state, signal(state, S.DOCUMENTS_INGESTED, payload))
    assert decision.fate is SignalFate.REJECTED
    assert decision.reason is not None and decision.reason.startswith("malformed job outcome")
    assert decision.state == state
    assert len(signal_audits(decision)) == 1


@pytest.mark.parametrize(
    "step", [Step.WAIT_FOR_DOCUMENTS, Step.WAIT_FOR_FRAMEWORK_SELECTION, Step.WAIT_FOR_SOA_APPROVAL]
)
def test_job_outcomes_at_a_wait_are_ignored(step: Step) -> None:
    state = drive_to(step)
    previous_job = job_id_for(state, Step.INGEST_DOCUMENTS, 1)
    for type_ in COMPLETION_SIGNALS:
        decision = decide(
            state,
            signal(
                state,
                type_,
                outcome_payload(state, step=Step.INGEST_DOCUMENTS, job_id=previous_job),
            ),
        )
        assert decision.fate is SignalFate.IGNORED
        assert decision.state == state


def test_drafting_job_is_asked_for_the_next_version() -> None:
    state = positioned(Step.CREATE_SOA_DRAFT)
    before = state.evolve(
        step=Step.CREATE_SCOPE, active_job_id=job_id_for(state, Step.CREATE_SCOPE, 1)
    )
    before = before.with_entry("artifacts", ArtifactKind.SOA, 4)
    decision = decide(before, job_done(before))
    jobs = [e for e in decision.effects if isinstance(e, EnqueueJob)]
    assert jobs[0].step is Step.CREATE_SOA_DRAFT
    assert jobs[0].parameters["artifact_version"] == 5


# --- retrying a failed job step (operator command) ----------------------------------------


@pytest.mark.parametrize("step", JOB_STEPS)
def test_retry_runs_the_failed_step_again_as_a_new_attempt(step: Step) -> None:
    state = drive_to(step)
    failed = decide(state, job_failed(state)).state
    decision = decide(failed, retry_signal(failed))

    assert decision.fate is SignalFate.APPLIED
    new = decision.state
    assert (new.step, new.status, new.reason) == (step, WorkflowStatus.RUNNING, None)
    assert new.attempt(step) == 2
    assert new.active_job_id == f"{state.run_id}:{step.value}:2"
    assert [(j.job_id, j.attempt) for j in enqueued(decision)] == [(new.active_job_id, 2)]
    # The first attempt's outcome is stale now; the new attempt's completes the step.
    assert decide(new, job_done(state)).fate is SignalFate.IGNORED
    assert decide(new, job_done(new)).state.step is step.next()


@pytest.mark.parametrize("reason", ["", "  "])
def test_retry_needs_a_reason(reason: str) -> None:
    state = drive_to(Step.INDEX_KB)
    failed = decide(state, job_failed(state)).state
    decision = decide(failed, retry_signal(failed, reason))
    assert decision.fate is SignalFate.REJECTED
    assert decision.state == failed


@pytest.mark.parametrize("step", [Step.INDEX_KB, Step.WAIT_FOR_GAP_APPROVAL])
def test_retry_of_a_run_that_did_not_fail_is_ignored(step: Step) -> None:
    state = drive_to(step)
    decision = decide(state, retry_signal(state))
    assert decision.fate is SignalFate.IGNORED
    assert decision.state == state


def test_signals_held_during_a_failure_apply_after_the_retry() -> None:
    state = drive_to(Step.CREATE_SOA_DRAFT)
    inbox = Inbox(state)
    inbox.deliver(job_failed(state))
    envelope, view = approval(state, ArtifactKind.SOA, version=1)
    inbox.deliver(envelope, view)
    assert inbox.pending == [envelope]
    inbox.deliver(retry_signal(inbox.state))
    inbox.deliver(job_done(inbox.state))
    assert inbox.pending == []
    assert inbox.state.step is Step.INGEST_SOA
    assert inbox.state.is_approved(ArtifactKind.SOA)
