"""Property-based tests: random signal sequences through decide and an inbox model.

The inbox model (`lifecycle_kit.Inbox`) retries pending signals after each decided one,
like `orchestrator.engine.coordinator.apply_pending`. Every call of `decide` is checked against
invariants that hold whatever the order, validity or duplication of the signals.

The signals are the brief's (start, inputs, job outcomes, approvals, block/resume/cancel)
plus step retries; reprocessing, revisions, reviewer rejections and multi-party policies
(which may legitimately move a run backwards) are not generated here.
"""

from __future__ import annotations

import uuid
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from orchestrator.contracts.jobs import JobOutcome
from orchestrator.contracts.signals import (
    APPROVAL_SIGNALS,
    ArtifactKind,
    SignalEnvelope,
    SignalFate,
)
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, StepKind, StepStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import decide
from orchestrator.lifecycle.definition import (
    APPROVAL_WAIT_FOR,
    APPROVED_AT,
    MAX_TRANSITIONS_PER_DECISION,
    STEP_SPECS,
)
from orchestrator.lifecycle.effects import Audit, ConsumeApproval, EnqueueJob
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import job_id_for
from tests.support.decisions import (
    COMPLETION_SIGNALS,
    FATE_AUDIT,
    SIGNAL_AUDITS,
    Call,
    Inbox,
    S,
    approval,
    completed,
    control_signal,
    effects_of,
    entered,
    framework_signal,
    job_done,
    job_failed,
    new_state,
    next_signal,
    outcome_payload,
    position,
    signal,
    start_signal,
    step_changes,
)

SETTINGS = settings(
    max_examples=200,
    deadline=None,
    stateful_step_count=30,
    suppress_health_check=[HealthCheck.too_slow],
)
APPROVABLE = [ArtifactKind.SCOPE, *APPROVAL_WAIT_FOR]
EIGHT_STATUSES = frozenset(WorkflowStatus)
STATUS_OF_KIND = {
    StepKind.JOB: WorkflowStatus.RUNNING,
    StepKind.WAIT_FOR_INPUT: WorkflowStatus.WAITING_FOR_INPUT,
    StepKind.WAIT_FOR_APPROVAL: WorkflowStatus.WAITING_FOR_APPROVAL,
}


# --- an independent oracle for approvals ---------------------------------------------------------


def approval_is_valid(
    before: RunState, envelope: SignalEnvelope, view: ApprovalView | None
) -> bool:
    """Whether `view` may approve the artifact `envelope` names, given the run `before`."""
    if view is None or not envelope.type.is_approval:
        return False
    kind = APPROVAL_SIGNALS[envelope.type]
    return (
        view.approval_event_id == envelope.approval_event_id
        and view.tenant_id == before.tenant_id
        and view.organization_id == before.organization_id
        and view.assessment_id == before.assessment_id
        and view.artifact_kind is kind
        and before.artifacts.get(kind) == view.artifact_version
        and view.decision is ApprovalDecision.APPROVED
        and not view.consumed
        # Beyond the brief: a version sent back by a reviewer, or reviewed by the
        # person who asked for the draft, never counts (default policy).
        and before.rejected.get(kind) != view.artifact_version
        and before.drafted_by.get(kind) != view.approver_id
    )


# --- invariants of one decision ------------------------------------------------------------------


def check_call(call: Call) -> None:
    before, decision = call.before, call.decision
    after = decision.state
    assert decision.fate is not SignalFate.CONFLICT
    assert after.status in EIGHT_STATUSES and len(EIGHT_STATUSES) == 8
    _check_fate(call)
    _check_progress(call)
    _check_approvals(call)
    _check_job_outcome(call)
    if before.status.is_terminal:
        assert after == before, "a terminal run changed"
        assert decision.fate in (SignalFate.IGNORED, SignalFate.REJECTED)


def _check_fate(call: Call) -> None:
    before, decision = call.before, call.decision
    about_signal = [
        e for e in decision.effects if isinstance(e, Audit) and e.event_type in SIGNAL_AUDITS
    ]
    if decision.fate is SignalFate.PENDING:
        assert decision.effects == () and decision.state == before
        return
    assert len(about_signal) == 1, decision
    assert decision.effects[0] is about_signal[0]
    assert about_signal[0].event_type is FATE_AUDIT[decision.fate]
    assert about_signal[0].metadata["signal_id"] == str(call.signal.signal_id)
    if decision.fate is not SignalFate.APPLIED:
        assert decision.state == before
        assert len(decision.effects) == 1


def _redrafts_report(call: Call) -> bool:
    """The one step back: the scope approved while the report waits for its approval (its
    sign-off named the scope unapproved) redrafts the report."""
    return (
        call.signal.type is S.SCOPE_APPROVED
        and call.before.step is Step.WAIT_FOR_REPORT_APPROVAL
        and call.decision.state.step is Step.CREATE_REPORT
    )


def _check_progress(call: Call) -> None:
    before, decision = call.before, call.decision
    after = decision.state
    if _redrafts_report(call):
        assert entered(decision) == [Step.CREATE_REPORT] and not completed(decision)
        return
    assert position(after.step) >= position(before.step), "the run moved backwards"
    steps = entered(decision)
    assert len(steps) <= MAX_TRANSITIONS_PER_DECISION
    assert len(steps) <= 2  # only the start enters two steps (validate, then a wait)
    assert len(set(steps)) == len(steps)
    assert steps == sorted(steps, key=position)
    for step in completed(decision):
        assert position(before.step) <= position(step) <= position(after.step)


def _check_approvals(call: Call) -> None:
    before, decision = call.before, call.decision
    after = decision.state
    consumed = effects_of(decision, ConsumeApproval)
    if consumed:
        assert decision.fate is SignalFate.APPLIED
        assert approval_is_valid(before, call.signal, call.approval)
        assert call.approval is not None
        assert consumed == [
            ConsumeApproval(
                call.approval.approval_event_id,
                call.approval.artifact_kind,
                call.approval.artifact_version,
            )
        ]
    for step in completed(decision):
        if STEP_SPECS[step].kind is not StepKind.WAIT_FOR_APPROVAL:
            continue
        kind = APPROVED_AT[step]
        # An approval wait is passed only by a valid event for the current version.
        assert before.step is step
        assert call.signal.type is STEP_SPECS[step].awaits
        assert approval_is_valid(before, call.signal, call.approval), call
        assert len(consumed) == 1
        assert after.approved[kind] == before.artifacts[kind] == after.artifacts[kind]


def _check_job_outcome(call: Call) -> None:
    before, decision = call.before, call.decision
    if not call.signal.type.is_job_outcome or decision.fate is not SignalFate.APPLIED:
        for step in completed(decision):
            assert STEP_SPECS[step].kind is not StepKind.JOB, "a job step completed without it"
        return
    outcome = JobOutcome.model_validate(call.signal.payload)
    assert outcome.job_id == before.active_job_id, "an outcome of another job was applied"
    assert before.status is WorkflowStatus.RUNNING
    assert before.step is not None and STEP_SPECS[before.step].kind is StepKind.JOB
    if decision.state.status is not WorkflowStatus.FAILED:
        assert call.signal.type is STEP_SPECS[before.step].completion_signal
        assert completed(decision)[0] is before.step


# --- invariants of a state -----------------------------------------------------------------------


def check_state(state: RunState) -> None:
    assert state.status in EIGHT_STATUSES
    passed = position(state.step) if state.status is not WorkflowStatus.COMPLETED else 99
    for kind, wait in APPROVAL_WAIT_FOR.items():
        if position(wait) < passed:
            assert state.is_approved(kind), f"{wait.value} passed without approval"
    if state.status is WorkflowStatus.PENDING:
        assert state.step is None
    elif state.status in STATUS_OF_KIND.values():
        assert state.step is not None
        assert STATUS_OF_KIND[STEP_SPECS[state.step].kind] is state.status
    running = state.status is WorkflowStatus.RUNNING or (
        state.status is WorkflowStatus.BLOCKED and state.blocked_from is WorkflowStatus.RUNNING
    )
    if running:
        assert state.step is not None
        assert state.active_job_id == job_id_for(state, state.step, state.attempt(state.step))
    else:
        assert state.active_job_id is None
    if state.status in (WorkflowStatus.BLOCKED, WorkflowStatus.FAILED):
        assert state.reason
    if state.status is WorkflowStatus.COMPLETED:
        assert state.step is Step.CLOSE_ASSESSMENT


# --- the state machine ---------------------------------------------------------------------------

OUTCOME_VARIANTS = [
    "correct",
    "correct",
    "correct",
    "wrong_type",
    "stale",
    "future",
    "no_artifact",
    "failed",
    "unsuccessful",
    "malformed",
]
APPROVAL_VARIANTS = [
    "valid",
    "valid",
    "valid",
    "stale_version",
    "future_version",
    "wrong_kind",
    "rejected",
    "consumed",
    "missing",
    "other_tenant",
]


class LifecycleMachine(RuleBasedStateMachine):
    """Random signals (valid or not, early, late, duplicated, reordered) into one run."""

    def __init__(self) -> None:
        super().__init__()
        self.inbox = Inbox(new_state())
        self.checked = 0
        self.history: list[tuple[SignalEnvelope, ApprovalView | None]] = []
        self.delayed: list[tuple[SignalEnvelope, ApprovalView | None]] = []
        self.job_ids: list[str] = []
        self.completions: Counter[Step] = Counter()
        self.uploads_during_ingestion = 0
        self.report_redrafts = 0

    @property
    def state(self) -> RunState:
        return self.inbox.state

    def _send(self, envelope: SignalEnvelope, view: ApprovalView | None = None) -> None:
        self.history.append((envelope, view))
        self.inbox.deliver(envelope, view)
        self._check_new_calls()

    def _check_new_calls(self) -> None:
        for call in self.inbox.calls[self.checked :]:
            check_call(call)
            for job in effects_of(call.decision, EnqueueJob):
                assert job.job_id not in self.job_ids, "a job id was enqueued twice"
                assert job.job_id == job_id_for(call.before, job.step, job.attempt)
                self.job_ids.append(job.job_id)
            self.completions.update(completed(call.decision))
            if (
                call.signal.type is S.DOCUMENTS_UPLOADED
                and call.before.step is Step.INGEST_DOCUMENTS
                and call.decision.fate is SignalFate.APPLIED
            ):
                self.uploads_during_ingestion += 1
            self.report_redrafts += _redrafts_report(call)
        self.checked = len(self.inbox.calls)
        # Each step is completed at most once: the machine sends no reprocess/revision.
        # Ingestion may run again, once per upload that came while it ran, and the report
        # once per redraft.
        allowed = {
            Step.INGEST_DOCUMENTS: 1 + self.uploads_during_ingestion,
            Step.CREATE_REPORT: 1 + self.report_redrafts,
        }
        assert all(n <= allowed.get(step, 1) for step, n in self.completions.items()), (
            self.completions
        )

    @initialize(early_start=st.booleans())
    def begin(self, early_start: bool) -> None:
        if early_start:
            self._send(start_signal(self.state))

    @rule(valid=st.sampled_from([True, True, False]))
    def start(self, valid: bool) -> None:
        self._send(
            start_signal(self.state, None if not valid else {"name": "FY25", "status": "active"})
        )

    @rule()
    def documents(self) -> None:
        self._send(signal(self.state, S.DOCUMENTS_UPLOADED, {"document_count": 1}))

    @rule(name=st.sampled_from(["SCF", "ISO 27001", "", "  "]))
    def framework(self, name: str) -> None:
        self._send(framework_signal(self.state, name))

    @rule(variant=st.sampled_from(OUTCOME_VARIANTS), data=st.data())
    def job_outcome(self, variant: str, data: st.DataObject) -> None:
        self._send(self._outcome(variant, data))

    def _outcome(self, variant: str, data: st.DataObject) -> SignalEnvelope:
        state = self.state
        step = state.step if state.step is not None else Step.INGEST_DOCUMENTS
        is_job = STEP_SPECS[step].kind is StepKind.JOB and state.active_job_id is not None
        if variant == "correct" and is_job:
            return job_done(state)
        if variant == "failed":
            return job_failed(state, step=step)
        if variant == "unsuccessful":
            type_ = data.draw(st.sampled_from(COMPLETION_SIGNALS))
            return signal(state, type_, outcome_payload(state, step=step, succeeded=False))
        if variant == "stale" and self.job_ids:
            stale = data.draw(st.sampled_from(self.job_ids))
            type_ = data.draw(st.sampled_from(COMPLETION_SIGNALS))
            return signal(state, type_, outcome_payload(state, step=step, job_id=stale))
        if variant == "future":
            future = job_id_for(state, step, state.attempt(step) + 1)
            return signal(state, S.JOB_COMPLETED, outcome_payload(state, step=step, job_id=future))
        if variant == "malformed":
            return signal(state, S.JOB_COMPLETED, {"job_id": state.active_job_id or "x"})
        if variant == "no_artifact":
            type_ = STEP_SPECS[step].completion_signal or S.JOB_COMPLETED
            return signal(state, type_, outcome_payload(state, step=step))
        type_ = data.draw(st.sampled_from(COMPLETION_SIGNALS))
        return signal(state, type_, outcome_payload(state, step=step))

    @rule(
        kind=st.sampled_from(["awaited", "awaited", *APPROVABLE]),
        variant=st.sampled_from(APPROVAL_VARIANTS),
    )
    def approve(self, kind: ArtifactKind | str, variant: str) -> None:
        """An approval (valid or not) of any kind, or of the artifact the run awaits now."""
        if kind == "awaited":
            kind = self._awaited()
        assert isinstance(kind, ArtifactKind)
        envelope, view = self._approval(kind, variant)
        self._send(envelope, view)

    def _awaited(self) -> ArtifactKind:
        step = self.state.step
        if step in APPROVED_AT:
            return APPROVED_AT[step]
        if step is not None and position(step) <= position(Step.WAIT_FOR_SOA_APPROVAL):
            return ArtifactKind.SCOPE
        return ArtifactKind.REPORT

    def _approval(
        self, kind: ArtifactKind, variant: str
    ) -> tuple[SignalEnvelope, ApprovalView | None]:
        state = self.state
        current = state.artifacts.get(kind, 1)
        variants: dict[str, dict[str, Any]] = {
            "valid": {},
            "stale_version": {"version": current - 1 if current > 1 else current + 1},
            "future_version": {"version": current + 1},
            "wrong_kind": {"artifact_kind": next(k for k in APPROVABLE if k is not kind)},
            "rejected": {"decision": ApprovalDecision.REJECTED},
            "consumed": {"consumed": True},
            "missing": {},
            "other_tenant": {"tenant_id": "tenant-b"},
        }
        changes = variants[variant]
        envelope, view = approval(state, kind, **changes)
        return envelope, (None if variant == "missing" else view)

    @rule(
        kind=st.sampled_from(["block", "block", "resume", "resume", "resume", "cancel", "retry"]),
        reason=st.sampled_from(["", "auditor away"]),
    )
    def control(self, kind: str, reason: str) -> None:
        """Block, resume, cancel, retry; without a reason cancel and retry are refused."""
        self._send(control_signal(self.state, kind, reason))

    @rule(steps=st.integers(min_value=1, max_value=6))
    def advance(self, steps: int) -> None:
        """The happy path for a while: the signal each position needs, valid."""
        for _ in range(steps):
            if self.state.status.is_terminal:
                return
            self._send(*next_signal(self.state))

    @precondition(lambda self: self.history)
    @rule(data=st.data())
    def duplicate(self, data: st.DataObject) -> None:
        """The same request again, as a new signal (another idempotency key)."""
        envelope, view = data.draw(st.sampled_from(self.history))
        again = envelope.model_copy(
            update={"signal_id": uuid.uuid4(), "idempotency_key": f"dup:{uuid.uuid4()}"}
        )
        self._send(again, view)

    @rule()
    def hold_next(self) -> None:
        """Build the signal the run needs now, but deliver it later (reordering)."""
        if not self.state.status.is_terminal:
            self.delayed.append(next_signal(self.state))

    @precondition(lambda self: self.delayed)
    @rule(reverse=st.booleans())
    def release(self, reverse: bool) -> None:
        held = list(reversed(self.delayed)) if reverse else list(self.delayed)
        self.delayed.clear()
        for envelope, view in held:
            self._send(envelope, view)

    @rule(
        field=st.sampled_from(["run_id", "tenant_id", "organization_id", "assessment_id"]),
        data=st.data(),
    )
    def foreign(self, field: str, data: st.DataObject) -> None:
        envelope, view = (
            data.draw(st.sampled_from(self.history))
            if self.history
            else (signal(self.state, S.ASSESSMENT_CANCELLED), None)
        )
        value: Any = uuid.uuid4() if field in ("run_id", "assessment_id") else "other"
        foreign = envelope.model_copy(update={"signal_id": uuid.uuid4(), field: value})
        # Another run's signal never reaches this run's inbox; decide must refuse it anyway.
        call = Call(self.state, foreign, view, decide(self.state, foreign, view))
        check_call(call)
        assert call.decision.fate is SignalFate.REJECTED
        assert call.decision.reason == "signal does not belong to this run"

    @invariant()
    def state_is_consistent(self) -> None:
        check_state(self.state)

    @invariant()
    def pending_signals_are_still_early(self) -> None:
        """The inbox loop ran to its end: every signal left pending is still pending now."""
        for envelope in self.inbox.pending:
            view = self.inbox.approvals.get(envelope.approval_event_id)  # type: ignore[arg-type]
            assert decide(self.state, envelope, view).fate is SignalFate.PENDING

    def teardown(self) -> None:
        """Liveness: from wherever the run got to, the happy path (with retries) ends it."""
        for _ in range(80):
            if self.state.status.is_terminal:
                break
            self._send(*next_signal(self.state))
        assert self.state.status in (WorkflowStatus.COMPLETED, WorkflowStatus.CANCELLED), self.state
        if self.state.status is WorkflowStatus.COMPLETED:
            assert set(self.completions) == set(STEP_ORDER)


LifecycleMachine.TestCase.settings = SETTINGS
TestLifecycleMachine = LifecycleMachine.TestCase


# --- reordering of the human signals -------------------------------------------------------------

HUMAN_SIGNALS = ["start", "documents", "framework", *[k.value for k in APPROVABLE]]


@SETTINGS
@given(order=st.permutations(HUMAN_SIGNALS), ticks=st.lists(st.integers(0, 8), max_size=12))
def test_any_order_of_human_signals_completes_the_same_run(
    order: list[str], ticks: list[int]
) -> None:
    """People's signals in any order, interleaved with job completions, give one result."""
    inbox = Inbox(new_state())
    state = inbox.state
    human: dict[str, Any] = {
        "start": (start_signal(state), None),
        "documents": (signal(state, S.DOCUMENTS_UPLOADED), None),
        "framework": (framework_signal(state, "ISO 27001"), None),
    }
    for kind in APPROVABLE:
        human[kind.value] = approval(state, kind, version=1)
    queue = list(order)
    tick_at = set(ticks)
    for index in range(len(queue) + 30):
        if index in tick_at or not queue:
            _tick(inbox)
        if queue:
            inbox.deliver(*human[queue.pop(0)])
        if inbox.state.status is WorkflowStatus.COMPLETED:
            break
    # The scope may be approved until the report gate opens; approved while the report
    # waits (its sign-off named the scope unapproved), the report is drafted again and
    # that second version is the one to approve.
    scope_calls = [
        c
        for c in inbox.calls
        if c.signal.type is S.SCOPE_APPROVED and c.decision.fate is not SignalFate.PENDING
    ]
    redrafted = bool(scope_calls) and (scope_calls[0].before.step is Step.WAIT_FOR_REPORT_APPROVAL)
    if redrafted:
        _tick(inbox)
        inbox.deliver(*approval(inbox.state, ArtifactKind.REPORT, version=2))
    for call in inbox.calls:
        check_call(call)
    final = inbox.state
    assert final.status is WorkflowStatus.COMPLETED, final
    assert final.framework == "ISO 27001"
    assert {k: v for k, v in final.approved.items() if k is not ArtifactKind.SCOPE} == (
        dict.fromkeys(APPROVAL_WAIT_FOR, 1) | {ArtifactKind.REPORT: 2 if redrafted else 1}
    )
    assert [c.decision.fate for c in scope_calls] == [SignalFate.APPLIED] * len(scope_calls)
    assert final.is_approved(ArtifactKind.SCOPE) is bool(scope_calls)
    decided = [c for c in inbox.calls if c.decision.fate is not SignalFate.PENDING]
    again = [Step.CREATE_REPORT, Step.WAIT_FOR_REPORT_APPROVAL] if redrafted else []
    steps = list(STEP_ORDER)
    expected = steps[:-1] + again + steps[-1:]
    assert [s for c in decided for s in entered(c.decision)] == expected
    assert inbox.pending == []
    # When the report was drafted again, the approval of its first version came too late.
    stale = {(ArtifactKind.REPORT, 1)} if redrafted else set()
    assert all(
        v.consumed
        for v in inbox.approvals.values()
        if v.artifact_kind is not ArtifactKind.SCOPE
        and (v.artifact_kind, v.artifact_version) not in stale
    )


def _tick(inbox: Inbox) -> None:
    """The worker finishes the active job, if there is one."""
    state = inbox.state
    if state.status is WorkflowStatus.RUNNING and state.active_job_id is not None:
        inbox.deliver(job_done(state))


@SETTINGS
@given(
    steps=st.integers(0, 18),
    version=st.integers(1, 4),
    decision=st.sampled_from(list(ApprovalDecision)),
    consumed=st.booleans(),
    tenant=st.sampled_from(["tenant-a", "tenant-b"]),
)
def test_only_a_valid_event_passes_an_approval_wait(
    steps: int, version: int, decision: ApprovalDecision, consumed: bool, tenant: str
) -> None:
    """Drive a run some way, then offer one arbitrary approval event for its current wait."""
    inbox = Inbox(new_state())
    for _ in range(steps):
        inbox.deliver(*next_signal(inbox.state))
    state = inbox.state
    if state.status is not WorkflowStatus.WAITING_FOR_APPROVAL:
        return
    assert state.step is not None
    kind = APPROVED_AT[state.step]
    envelope, view = approval(
        state, kind, version=version, decision=decision, consumed=consumed, tenant_id=tenant
    )
    inbox.deliver(envelope, view)
    call = inbox.calls[-1]
    check_call(call)
    valid = (
        version == state.artifacts[kind]
        and decision is ApprovalDecision.APPROVED
        and not consumed
        and tenant == state.tenant_id
    )
    assert (call.decision.fate is SignalFate.APPLIED) is valid
    assert (inbox.state.step is state.step) is not valid
    assert bool(step_changes(call.decision, StepStatus.COMPLETED)) is valid
