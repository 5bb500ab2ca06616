"""Lifecycle definitions: a version and a content hash, pinned by each run at its start.

Through the real decide(): a run keeps the definition it started on when another one is
shipped, new runs take the newest, a run whose definition is not shipped fails with that
reason and may be migrated where a mapping is declared.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from orchestrator.contracts.audit import AuditEventType as E
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import ArtifactKind, SignalFate
from orchestrator.contracts.signals import SignalType as S
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.definitions import V1, LifecycleDefinition, Migration
from orchestrator.lifecycle.state import RunState
from orchestrator.testing.definition_v2 import V2
from tests.support.decisions import (
    approval,
    audits,
    drive,
    drive_to,
    entered,
    job_failed,
    new_state,
    retry_signal,
    run_to_completion,
    signal,
    start_signal,
)
from tests.support.definitions import deployed

# Recorded when v1 was first shipped: a change to v1's content must come as a new version.
V1_HASH = V1.content_hash


def migrate_signal(state: RunState, version: int, reason: str = "move it") -> Any:
    payload = {"to_version": version, "reason": reason}
    return signal(state, S.DEFINITION_MIGRATION_REQUESTED, payload)


def steps_entered(state: RunState | None = None) -> tuple[RunState, list[Step]]:
    final, decisions = run_to_completion(state)
    return final, [step for decision in decisions for step in entered(decision)]


def test_a_run_pins_the_newest_shipped_definition_with_its_hash() -> None:
    fresh = new_state()
    state = decide(fresh, start_signal(fresh)).state
    assert (state.definition_version, state.definition_hash) == (1, V1_HASH)
    assert state.context()["definition"] == {"version": 1, "hash": V1_HASH}
    # (Kept through the run row's JSON: test_lifecycle_steps' round trip at every step.)
    assert V2.content_hash != V1_HASH and len(V1_HASH) == 64
    # Wording and migrations are not content: a run's behaviour does not rest on them.
    assert replace(V2, description="other words").content_hash == V2.content_hash


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"omit": (Step.CREATE_POAM,)}, "create_report needs poam, never approved"),
        (
            {
                "omit": (Step.CREATE_POAM,),
                "gates": {Step.CREATE_REPORT: (), Step.CLOSE_ASSESSMENT: ()},
            },
            "waits for a poam draft that no step makes",
        ),
        ({"omit": (Step.WAIT_FOR_GAP_APPROVAL,)}, "needs gap_analysis, never approved"),
        ({"job_kinds": {Step.CREATE_SCOPE: None}}, "needs a job kind"),
        (
            {"migrations": (Migration(1, {Step.INGEST_SOA: Step.WAIT_FOR_SOA_APPROVAL}),)},
            "a step of another kind",
        ),
        (
            {
                "omit": (Step.INGEST_SOA,),
                "migrations": (Migration(1, {Step.INDEX_KB: Step.INGEST_SOA}),),
            },
            "not one of its steps",
        ),
    ],
)
def test_a_definition_that_could_not_run_is_refused(changes: dict[str, Any], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        V1.derive(9, **changes)
    with pytest.raises(ValueError, match="first step validates"):
        LifecycleDefinition(9, V1.steps[1:])
    assert V1.derive(9, job_kinds={Step.CREATE_SCOPE: JobKind.ANALYSIS}).content_hash == V1_HASH


def test_a_run_started_on_v1_completes_on_v1_after_v2_ships_and_new_runs_take_v2() -> None:
    old = drive_to(Step.WAIT_FOR_SOA_APPROVAL)
    assert old.definition_version == 1
    with deployed(V2):
        new, new_steps = steps_entered()
        old, old_steps = steps_entered(old)
    assert (old.status, old.definition_version) == (WorkflowStatus.COMPLETED, 1)
    assert Step.INGEST_SOA in old_steps
    assert (new.status, new.definition_version, new.definition_hash) == (
        WorkflowStatus.COMPLETED,
        2,
        V2.content_hash,
    )
    assert Step.INGEST_SOA not in new_steps and Step.RUN_EVIDENCE_ANALYSIS in new_steps


def test_a_run_whose_definition_is_no_longer_shipped_fails_with_that_reason() -> None:
    state = drive_to(Step.WAIT_FOR_SOA_APPROVAL)
    with deployed(V2, retired=[1]):
        envelope, view = approval(state, ArtifactKind.SOA)
        decision = decide(state, envelope, view)
        failed = decision.state
        assert decision.fate is SignalFate.IGNORED
        assert failed.status is WorkflowStatus.FAILED
        assert failed.reason == (
            "definition_unavailable: lifecycle definition v1 is not shipped "
            "(this deployment ships v2)"
        )
        assert [a.metadata for a in audits(decision, E.LIFECYCLE_WORKFLOW_FAILED)] == [
            {"error_code": "definition_unavailable"}
        ]
        refused = decide(failed, retry_signal(failed))
        assert refused.fate is SignalFate.REJECTED and "migrate the run" in (refused.reason or "")
        assert decide(failed, *approval(failed, ArtifactKind.SOA)).fate is SignalFate.PENDING

        moved = decide(failed, migrate_signal(failed, 2))
        assert moved.fate is SignalFate.APPLIED
        assert (moved.state.definition_version, moved.state.step) == (2, Step.WAIT_FOR_SOA_APPROVAL)
        [audit] = audits(moved, E.LIFECYCLE_WORKFLOW_DEFINITION_MIGRATED)
        assert audit.metadata["from_version"] == 1 and audit.metadata["to_hash"] == V2.content_hash
        resumed = decide(moved.state, retry_signal(moved.state)).state
        assert resumed.status is WorkflowStatus.WAITING_FOR_APPROVAL
        final, steps = steps_entered(resumed)
    assert final.status is WorkflowStatus.COMPLETED and Step.INGEST_SOA not in steps


def test_a_failed_run_standing_at_a_step_v2_lacks_moves_where_the_mapping_says() -> None:
    at_ingest = drive_to(Step.INGEST_SOA)
    failed_state = decide(at_ingest, job_failed(at_ingest)).state
    assert failed_state.status is WorkflowStatus.FAILED
    with deployed(V2):
        moved = decide(failed_state, migrate_signal(failed_state, 2)).state
        assert (moved.step, moved.status) == (Step.RUN_EVIDENCE_ANALYSIS, WorkflowStatus.FAILED)
        retried = decide(moved, retry_signal(moved)).state
    assert retried.step is Step.RUN_EVIDENCE_ANALYSIS and retried.active_job_id is not None


def test_migration_is_refused_without_a_mapping_while_a_job_runs_or_to_nothing_shipped() -> None:
    waiting = drive_to(Step.WAIT_FOR_SOA_APPROVAL)
    running = drive_to(Step.INGEST_SOA)
    no_mapping = V1.derive(3, omit=(Step.INGEST_SOA,))
    with deployed(V2, no_mapping):
        cases = {
            "declares no migration from v1": decide(waiting, migrate_signal(waiting, 3)),
            "not shipped (this deployment ships v1, v2, v3)": decide(
                waiting, migrate_signal(waiting, 7)
            ),
            "running ingest_soa": decide(running, migrate_signal(running, 2)),
            "a migration needs a reason": decide(waiting, migrate_signal(waiting, 2, "")),
            "on v1 already": decide(waiting, migrate_signal(waiting, 1)),
        }
    for reason, decision in cases.items():
        assert decision.fate in (SignalFate.REJECTED, SignalFate.IGNORED), reason
        assert reason in (decision.reason or ""), (reason, decision.reason)
        assert decision.state == (waiting if "running" not in reason else running)


def test_a_definition_changed_in_place_is_not_the_one_the_run_pinned() -> None:
    state = drive_to(Step.WAIT_FOR_SOA_APPROVAL).evolve(definition_hash="0" * 64)
    decision = decide(state, *approval(state, ArtifactKind.SOA))
    assert decision.state.status is WorkflowStatus.FAILED
    assert "changed since the run pinned it (000000000000 pinned" in (decision.state.reason or "")


def test_a_pin_newer_than_anything_shipped_waits_for_an_upgraded_worker() -> None:
    state = drive_to(Step.WAIT_FOR_SOA_APPROVAL).evolve(definition_version=3)
    decision = decide(state, *approval(state, ArtifactKind.SOA))
    assert decision.fate is SignalFate.PENDING and decision.state == state
    assert "waiting for a worker that ships it" in (decision.reason or "")
    pinned = {"version": 3, "hash": "f" * 64}
    fresh = new_state()
    early = decide(fresh, signal(fresh, S.WORKFLOW_START_REQUESTED, {"definition": pinned}))
    assert early.fate is SignalFate.PENDING


def test_default_signoff_policies_come_from_the_definition() -> None:
    from orchestrator.lifecycle.policies import GatePolicy, SignoffMode

    two = GatePolicy(SignoffMode.N_OF_M, approvers=("user:a", "user:b"), required=2)
    strict = V1.derive(4, default_policies={ArtifactKind.REPORT: two})
    with deployed(strict):
        state, _ = drive(until=lambda s: s.step is Step.WAIT_FOR_DOCUMENTS)
    assert state.policy(ArtifactKind.REPORT) == two
    assert state.definition_version == 4
