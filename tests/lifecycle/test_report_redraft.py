"""The report is what people sign, so it is drafted again when what it shows changes while
it waits: a reviewer's assessor statement (an amendment of its row `assessor`) or the
approval of an input its sign-off named unapproved (the scope, which may be approved until
the report gate opens)."""

from __future__ import annotations

from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.decide import Decision, decide
from orchestrator.lifecycle.effects import (
    ArtifactStatusChanged,
    EnqueueJob,
    PublishDraft,
    StepsSuperseded,
)
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import S, approval, drive_to, effects_of, job_done, signal

K = ArtifactKind


def _amend_report(state: RunState, actor: str = "user:lead") -> Decision:
    version = state.artifacts[K.REPORT]
    payload = {
        "artifact_kind": "report",
        "based_on": version,
        "version": version + 1,
        "reason": "the assessor's statement",
        "rows": ["assessor"],
    }
    return decide(state, signal(state, S.ARTIFACT_AMENDED, payload, actor_id=actor), None)


def test_the_scope_may_be_approved_until_the_report_gate_and_then_redrafts_the_report() -> None:
    state = drive_to(Step.WAIT_FOR_REPORT_APPROVAL)
    assert not state.is_approved(K.SCOPE) and state.artifacts[K.REPORT] == 1
    envelope, view = approval(state, K.SCOPE)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.APPLIED
    after = decision.state
    assert after.is_approved(K.SCOPE)
    assert (after.step, after.status) == (Step.CREATE_REPORT, WorkflowStatus.RUNNING)
    [job] = effects_of(decision, EnqueueJob)
    assert job.parameters["artifact_version"] == 2
    assert ArtifactStatusChanged(K.REPORT, 1, "superseded") in decision.effects
    assert StepsSuperseded((Step.WAIT_FOR_REPORT_APPROVAL,)) in decision.effects


def test_a_scope_approval_before_the_report_exists_redrafts_nothing() -> None:
    state = drive_to(Step.WAIT_FOR_MATURITY_APPROVAL)
    envelope, view = approval(state, K.SCOPE)
    decision = decide(state, envelope, view)
    assert decision.fate is SignalFate.APPLIED and decision.state.is_approved(K.SCOPE)
    assert decision.state.step is Step.WAIT_FOR_MATURITY_APPROVAL
    assert not effects_of(decision, EnqueueJob)


def test_an_amended_report_is_rendered_again_on_behalf_of_its_amender() -> None:
    state = drive_to(Step.WAIT_FOR_REPORT_APPROVAL)
    decision = _amend_report(state)
    assert decision.fate is SignalFate.APPLIED
    after = decision.state
    assert (after.step, after.status) == (Step.CREATE_REPORT, WorkflowStatus.RUNNING)
    [job] = effects_of(decision, EnqueueJob)
    assert (job.parameters["artifact_version"], job.requested_by) == (3, "user:lead")
    # The amended version (2) holds the statement the new draft (3) renders.
    assert ArtifactStatusChanged(K.REPORT, 2, "superseded") in decision.effects
    assert after.drafted_by[K.REPORT] == "user:lead"


def test_the_amended_report_is_not_published_its_redrawn_version_is() -> None:
    """The version an amendment makes holds the statement only until it is rendered: it is
    superseded in the same decision, so it never goes out; the rendered one does."""
    state = drive_to(Step.WAIT_FOR_REPORT_APPROVAL)
    amended = _amend_report(state)
    assert not effects_of(amended, PublishDraft)
    rendered = decide(amended.state, job_done(amended.state), None)
    assert effects_of(rendered, PublishDraft) == [PublishDraft(K.REPORT, 3)]
