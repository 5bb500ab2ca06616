"""A whole run from the start request to a closed assessment."""

from __future__ import annotations

from collections import Counter

from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, StepStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    MAX_TRANSITIONS_PER_DECISION,
    STEP_SPECS,
)
from orchestrator.lifecycle.effects import CloseAssessment, ConsumeApproval
from tests.support.decisions import (
    APPROVAL_WAITS,
    FRAMEWORK,
    JOB_STEPS,
    E,
    Inbox,
    S,
    approval,
    audits,
    completed,
    effects_of,
    enqueued,
    entered,
    framework_signal,
    job_done,
    new_state,
    run_to_completion,
    signal,
    step_changes,
)


def test_happy_path_visits_all_twenty_steps_in_order() -> None:
    final, decisions = run_to_completion()

    assert final.status is WorkflowStatus.COMPLETED
    assert final.step is Step.CLOSE_ASSESSMENT
    assert final.reason is None and final.active_job_id is None
    assert final.framework == FRAMEWORK
    assert [s for d in decisions for s in entered(d)] == list(STEP_ORDER)
    assert [s for d in decisions for s in completed(d)] == list(STEP_ORDER)
    assert dict(final.attempts) == dict.fromkeys(STEP_ORDER, 1)
    assert all(d.fate is SignalFate.APPLIED for d in decisions)
    # One start plus one signal for each step that does not complete inline.
    assert len(decisions) == 1 + 18


def test_happy_path_ends_with_one_close_assessment() -> None:
    _, decisions = run_to_completion()
    closes = [(i, e) for i, d in enumerate(decisions) for e in effects_of(d, CloseAssessment)]
    assert closes == [(len(decisions) - 1, CloseAssessment())]
    last = decisions[-1]
    assert audits(last)[-1].event_type is E.LIFECYCLE_WORKFLOW_COMPLETED
    assert sum(len(audits(d, E.LIFECYCLE_WORKFLOW_COMPLETED)) for d in decisions) == 1
    assert sum(len(audits(d, E.LIFECYCLE_WORKFLOW_STARTED)) for d in decisions) == 1


def test_happy_path_audits_every_step() -> None:
    _, decisions = run_to_completion()
    every = [a for d in decisions for a in audits(d)]
    started = Counter(a.step for a in every if a.event_type is E.LIFECYCLE_WORKFLOW_STEP_STARTED)
    done = Counter(a.step for a in every if a.event_type is E.LIFECYCLE_WORKFLOW_STEP_COMPLETED)
    assert started == Counter(STEP_ORDER)
    assert done == Counter(STEP_ORDER)
    waiting = [a.step for a in every if a.event_type is E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL]
    assert waiting == list(APPROVAL_WAITS)
    inputs = [a.step for a in every if a.event_type is E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT]
    assert inputs == [Step.WAIT_FOR_DOCUMENTS, Step.WAIT_FOR_FRAMEWORK_SELECTION]
    received = [a for a in every if a.event_type is E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED]
    assert len(received) == len(decisions)
    assert not [
        a
        for a in every
        if a.event_type
        in (
            E.LIFECYCLE_WORKFLOW_BLOCKED,
            E.LIFECYCLE_WORKFLOW_FAILED,
            E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED,
            E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED,
        )
    ]


def test_happy_path_jobs_approvals_and_artifacts() -> None:
    final, decisions = run_to_completion()
    jobs = [j for d in decisions for j in enqueued(d)]
    assert [j.step for j in jobs] == list(JOB_STEPS)
    assert [j.kind for j in jobs] == [STEP_SPECS[s].job_kind for s in JOB_STEPS]
    consumed = [c for d in decisions for c in effects_of(d, ConsumeApproval)]
    assert [(c.artifact_kind, c.artifact_version) for c in consumed] == [
        (k, 1) for k in APPROVAL_WAIT_FOR
    ]
    produced = {STEP_SPECS[s].produces for s in JOB_STEPS} - {None}
    assert dict(final.artifacts) == dict.fromkeys(produced, 1)
    assert dict(final.approved) == dict.fromkeys(APPROVAL_WAIT_FOR, 1)
    assert all(final.is_approved(k) for k in APPROVAL_WAIT_FOR)


def test_no_decision_enters_more_than_twenty_steps() -> None:
    _, decisions = run_to_completion()
    assert max(len(entered(d)) for d in decisions) <= MAX_TRANSITIONS_PER_DECISION
    # In fact only the start (validate + wait for documents) enters two.
    assert [len(entered(d)) for d in decisions] == [2] + [1] * (len(decisions) - 1)
    for d in decisions:
        steps = entered(d)
        assert len(steps) == len(set(steps))
        assert all(c.attempt == 1 for c in step_changes(d, StepStatus.RUNNING))


def test_every_human_signal_sent_early_still_completes_the_run() -> None:
    """People act ahead of the run; the inbox keeps their signals until each wait opens."""
    inbox = Inbox(new_state())
    state = inbox.state
    inbox.deliver(signal(state, S.DOCUMENTS_UPLOADED, {"document_count": 4}))
    inbox.deliver(framework_signal(state, "ISO 27001"))
    for kind in reversed([ArtifactKind.SCOPE, *APPROVAL_WAIT_FOR]):
        inbox.deliver(*approval(state, kind, version=1))
    assert inbox.calls and all(c.decision.fate is SignalFate.PENDING for c in inbox.calls)
    inbox.deliver(
        signal(
            state, S.WORKFLOW_START_REQUESTED, {"assessment": {"name": "FY25", "status": "active"}}
        )
    )
    for _ in range(len(JOB_STEPS)):
        assert inbox.state.status is WorkflowStatus.RUNNING, inbox.state
        inbox.deliver(job_done(inbox.state))

    assert inbox.state.status is WorkflowStatus.COMPLETED
    assert inbox.pending == []
    assert inbox.state.framework == "ISO 27001"
    assert inbox.state.is_approved(ArtifactKind.SCOPE)
    assert all(v.consumed for v in inbox.approvals.values())
    decided = [c for c in inbox.calls if c.decision.fate is not SignalFate.PENDING]
    assert all(c.decision.fate is SignalFate.APPLIED for c in decided)
    assert [s for c in decided for s in entered(c.decision)] == list(STEP_ORDER)
