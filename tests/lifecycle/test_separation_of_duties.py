"""Separation of duties over every version since the last approved one: whoever asked for
a version, had it drafted again or amended it may not approve the version waiting, even
when a colleague's amendment made the version waiting."""

from __future__ import annotations

from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.decide import Decision, decide
from orchestrator.lifecycle.effects import EnqueueJob
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import S, approval, drive_to, effects_of, job_done, reloaded, signal

SOA = ArtifactKind.SOA
OPERATOR, COLLEAGUE, REVIEWER = "user:op", "user:cleo", "user:rui"


def _applied(state: RunState, decision: Decision) -> RunState:
    assert decision.fate is SignalFate.APPLIED, decision.reason
    return decision.state


def _new_version_by(state: RunState, actor: str) -> RunState:
    """`actor` asks for a new SoA version; the drafting job makes it on their behalf."""
    asked = decide(
        state,
        signal(
            state,
            S.ARTIFACT_REVISION_REQUESTED,
            {"artifact_kind": SOA.value, "reason": "source data fixed"},
            actor_id=actor,
        ),
        None,
    )
    state = _applied(state, asked)
    [job] = effects_of(asked, EnqueueJob)
    outcome = job_done(state)
    outcome = outcome.model_copy(
        update={"payload": {**outcome.payload, "actor_id": job.requested_by}}
    )
    return _applied(state, decide(state, outcome, None))


def _amended_by(state: RunState, actor: str) -> RunState:
    version = state.artifacts[SOA]
    payload = {
        "artifact_kind": SOA.value,
        "based_on": version,
        "version": version + 1,
        "reason": "rows decided",
        "rows": ["A.5.1"],
    }
    amended = signal(state, S.ARTIFACT_AMENDED, payload, actor_id=actor)
    return _applied(state, decide(state, amended, None))


def _approval_by(state: RunState, who: str) -> Decision:
    envelope, view = approval(state, SOA, approver_id=who)
    return decide(state, envelope, view)


def _waiting_for_v3() -> RunState:
    state = drive_to(Step.WAIT_FOR_SOA_APPROVAL)
    state = _new_version_by(state, OPERATOR)
    assert state.step is Step.WAIT_FOR_SOA_APPROVAL and state.drafted_by[SOA] == OPERATOR
    state = _amended_by(state, COLLEAGUE)
    assert state.artifacts[SOA] == 3 and state.drafted_by[SOA] == COLLEAGUE
    return state


def test_the_requester_of_an_earlier_version_may_not_approve_a_colleagues_amendment() -> None:
    state = _waiting_for_v3()
    refused = _approval_by(state, OPERATOR)
    assert refused.fate is SignalFate.REJECTED
    assert "asked for or amended a version since the last approved one" in (refused.reason or "")
    assert _approval_by(state, COLLEAGUE).fate is SignalFate.REJECTED
    assert _approval_by(state, REVIEWER).fate is SignalFate.APPLIED


def test_an_approval_starts_the_count_again() -> None:
    state = _waiting_for_v3()
    assert state.authors(SOA)[-2:] == (OPERATOR, COLLEAGUE)
    approved = _applied(state, _approval_by(state, REVIEWER))
    assert SOA not in approved.earlier_drafters and approved.is_approved(SOA)
    again = reloaded(approved, context=state.context())
    assert again.earlier_drafters == state.earlier_drafters, "kept with the run's context"
