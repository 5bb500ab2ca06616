"""Builders for the lifecycle unit tests: states, signals, job outcomes, approvals, drivers.

Everything here goes through the real `decide`; nothing re-implements the lifecycle except
`positioned`, which constructs a state directly (for gates and other hard-to-reach cases).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, TypeVar

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.jobs import ArtifactRef, JobError, JobOutcome
from orchestrator.contracts.signals import (
    APPROVAL_SIGNALS,
    ArtifactKind,
    SignalEnvelope,
    SignalFate,
    SignalType,
)
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER, StepKind, StepStatus
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import Decision, decide
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, STEP_SPECS
from orchestrator.lifecycle.effects import Audit, Effect, EnqueueJob, StepChanged
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import job_id_for

S = SignalType
E = AuditEventType
EffectT = TypeVar("EffectT")

TENANT = "tenant-a"
ORG = "org-a"
HUMAN = "user:alice"
WORKER = "system:worker"
FRAMEWORK = "SCF 2024.2"
VALID_ASSESSMENT: dict[str, Any] = {"name": "FY25 SCF assessment", "status": "draft"}
MISSING: Any = object()
"""Leave a payload field out entirely."""

#: Artifact kind -> the signal that approves it.
APPROVAL_SIGNAL_FOR: dict[ArtifactKind, SignalType] = {
    kind: signal for signal, kind in APPROVAL_SIGNALS.items()
}
#: Steps by kind, in lifecycle order.
JOB_STEPS = tuple(s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.JOB)
INPUT_WAITS = tuple(s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.WAIT_FOR_INPUT)
APPROVAL_WAITS = tuple(s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.WAIT_FOR_APPROVAL)
INLINE_STEPS = tuple(s for s in STEP_ORDER if STEP_SPECS[s].kind is StepKind.INLINE)
NON_INLINE_STEPS = tuple(s for s in STEP_ORDER if STEP_SPECS[s].kind is not StepKind.INLINE)
COMPLETION_SIGNALS = (
    S.DOCUMENTS_INGESTED,
    S.KB_INDEXED,
    S.SCF_PRE_ANALYSIS_COMPLETED,
    S.JOB_COMPLETED,
)
SIGNAL_AUDITS = (
    E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
    E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED,
    E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED,
)
FATE_AUDIT = {
    SignalFate.APPLIED: E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED,
    SignalFate.IGNORED: E.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED,
    SignalFate.REJECTED: E.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED,
}
STATUS_FOR_KIND = {
    StepKind.JOB: WorkflowStatus.RUNNING,
    StepKind.INLINE: WorkflowStatus.RUNNING,
    StepKind.WAIT_FOR_INPUT: WorkflowStatus.WAITING_FOR_INPUT,
    StepKind.WAIT_FOR_APPROVAL: WorkflowStatus.WAITING_FOR_APPROVAL,
}


def position(step: Step | None) -> int:
    """A step's place in the lifecycle; -1 for a run that has no step yet."""
    return -1 if step is None else STEP_ORDER.index(step)


# --- states ---------------------------------------------------------------------------------


def new_state(**changes: Any) -> RunState:
    """A fresh PENDING run with its own ids; `changes` override any field."""
    state = RunState(
        run_id=changes.pop("run_id", uuid.uuid4()),
        tenant_id=changes.pop("tenant_id", TENANT),
        organization_id=changes.pop("organization_id", ORG),
        assessment_id=changes.pop("assessment_id", uuid.uuid4()),
    )
    for name in ("attempts", "artifacts", "approved"):
        if name in changes:
            changes[name] = MappingProxyType(dict(changes[name]))
    return state.evolve(**changes)


def positioned(
    step: Step,
    *,
    approved: Iterable[ArtifactKind] | None = None,
    base: RunState | None = None,
    **changes: Any,
) -> RunState:
    """A state built directly as if `step` had just been entered for the first time.

    `base` lends its run, tenant, organization and assessment ids.

    Artifacts drafted before `step` exist at version 1; by default every artifact whose
    approval wait lies before `step` is approved, `approved` replaces that set.
    """
    index = position(step)
    before = STEP_ORDER[:index]
    artifacts = {STEP_SPECS[s].produces: 1 for s in before if STEP_SPECS[s].produces}
    if approved is None:
        approved = [k for k, wait in APPROVAL_WAIT_FOR.items() if position(wait) < index]
    fields: dict[str, Any] = {
        "step": step,
        "status": STATUS_FOR_KIND[STEP_SPECS[step].kind],
        "attempts": {s: 1 for s in STEP_ORDER[: index + 1]},
        "artifacts": artifacts,
        "approved": {kind: artifacts[kind] for kind in approved},
        "framework": FRAMEWORK if index > position(Step.WAIT_FOR_FRAMEWORK_SELECTION) else None,
    }
    fields.update(changes)
    if base is not None:
        fields.update(identity(base))
    state = new_state(**fields)
    if STEP_SPECS[step].kind is StepKind.JOB and "active_job_id" not in changes:
        state = state.evolve(active_job_id=job_id_for(state, step, state.attempt(step)))
    return state


def lifecycle_view(state: RunState) -> tuple[Any, ...]:
    """The fields the lifecycle's brief is about, for comparing states built two ways."""
    return (
        state.status,
        state.step,
        dict(state.attempts),
        dict(state.artifacts),
        dict(state.approved),
        state.framework,
        state.active_job_id,
        state.reason,
        state.blocked_from,
    )


def identity(state: RunState) -> dict[str, Any]:
    return {
        "run_id": state.run_id,
        "tenant_id": state.tenant_id,
        "organization_id": state.organization_id,
        "assessment_id": state.assessment_id,
    }


def reloaded(state: RunState, context: dict[str, Any] | None = None) -> RunState:
    """The state read back from the run row it is stored in (with `context` as the row's
    context, the state's own by default)."""
    return RunState.from_row(
        **identity(state),
        status=state.status.value,
        step=state.step.value if state.step else None,
        reason=state.reason,
        context=state.context() if context is None else context,
    )


# --- signals --------------------------------------------------------------------------------


def signal(
    state: RunState, type_: SignalType, payload: dict[str, Any] | None = None, **overrides: Any
) -> SignalEnvelope:
    """An envelope for `state`'s run; `overrides` replace any envelope field."""
    fields: dict[str, Any] = {
        **identity(state),
        "type": type_,
        "trace_id": "trace-test",
        "actor_id": WORKER if type_.is_job_outcome else HUMAN,
        "idempotency_key": f"{type_.value}:{uuid.uuid4()}",
        "payload": payload or {},
    }
    needs_event = type_.is_approval or type_ is S.APPROVAL_REJECTED
    if needs_event and "approval_event_id" not in overrides:
        fields["approval_event_id"] = uuid.uuid4()
    fields.update(overrides)
    return SignalEnvelope(**fields)


def start_signal(state: RunState, assessment: Any = VALID_ASSESSMENT) -> SignalEnvelope:
    """The start request; `assessment=None` leaves the snapshot out of the payload."""
    payload = {} if assessment is None else {"assessment": assessment}
    return signal(state, S.WORKFLOW_START_REQUESTED, payload)


#: The operator's controls of a run, by the names the property tests draw.
CONTROLS = {
    "block": S.ASSESSMENT_BLOCKED,
    "resume": S.ASSESSMENT_RESUMED,
    "cancel": S.ASSESSMENT_CANCELLED,
    "retry": S.STEP_RETRY_REQUESTED,
}


def control_signal(state: RunState, kind: str, reason: str) -> SignalEnvelope:
    """Block, resume, cancel or retry (`kind`), with the reason unless it is empty."""
    return signal(state, CONTROLS[kind], {"reason": reason} if reason else {})


def cancel_signal(state: RunState, reason: str = "assessment withdrawn") -> SignalEnvelope:
    return signal(state, S.ASSESSMENT_CANCELLED, {"reason": reason} if reason else {})


def block_signal(
    state: RunState, reason: str | None = None, kind: str | None = None
) -> SignalEnvelope:
    payload = {k: v for k, v in (("reason", reason), ("kind", kind)) if v is not None}
    return signal(state, S.ASSESSMENT_BLOCKED, payload)


def resume_signal(state: RunState) -> SignalEnvelope:
    return signal(state, S.ASSESSMENT_RESUMED)


def retry_signal(state: RunState, reason: str = "the worker is back") -> SignalEnvelope:
    return signal(state, S.STEP_RETRY_REQUESTED, {"reason": reason} if reason else {})


def framework_signal(state: RunState, framework: Any = FRAMEWORK) -> SignalEnvelope:
    payload = {} if framework is MISSING else {"framework": framework}
    return signal(state, S.FRAMEWORK_SELECTED, payload)


def outcome_payload(
    state: RunState,
    *,
    step: Step | None = None,
    attempt: int | None = None,
    job_id: str | None = None,
    succeeded: bool = True,
    artifact_kind: ArtifactKind | None = None,
    artifact_version: int = 1,
    error: JobError | None = None,
) -> dict[str, Any]:
    """A JobOutcome dict; by default for the run's active job (or its current step's job)."""
    step = step or state.step
    assert step is not None, "a job outcome needs a step"
    attempt = attempt or max(state.attempt(step), 1)
    job_id = job_id or state.active_job_id or job_id_for(state, step, attempt)
    artifact = None
    if artifact_kind is not None:
        artifact = ArtifactRef(
            artifact_id=uuid.uuid4(), kind=artifact_kind, version=artifact_version
        )
    outcome = JobOutcome(
        job_id=job_id,
        run_id=state.run_id,
        step=step,
        attempt=attempt,
        idempotency_key=f"job:{job_id}",
        trace_id="trace-test",
        tenant_id=state.tenant_id,
        organization_id=state.organization_id,
        assessment_id=state.assessment_id,
        actor_id=WORKER,
        succeeded=succeeded,
        artifact=artifact,
        error=error,
    )
    return outcome.model_dump(mode="json")


def next_version(state: RunState, kind: ArtifactKind) -> int:
    """The version a drafting job is asked to produce (mirrors EnqueueJob parameters)."""
    return state.artifacts.get(kind, 0) + 1


def job_done(
    state: RunState,
    *,
    type_: SignalType | None = None,
    version: int | None = None,
    **payload_changes: Any,
) -> SignalEnvelope:
    """The matching completion signal for the active job, with the artifact it must report."""
    assert state.step is not None
    spec = STEP_SPECS[state.step]
    assert spec.kind is StepKind.JOB, f"{state.step} is not a job step"
    if spec.produces is not None and "artifact_kind" not in payload_changes:
        payload_changes["artifact_kind"] = spec.produces
        payload_changes.setdefault(
            "artifact_version", version or next_version(state, spec.produces)
        )
    payload = outcome_payload(state, **payload_changes)
    return signal(state, type_ or spec.completion_signal or S.JOB_COMPLETED, payload)


def job_failed(
    state: RunState,
    code: str = "worker_crashed",
    message: str = "the worker crashed",
    **payload_changes: Any,
) -> SignalEnvelope:
    payload = outcome_payload(
        state, succeeded=False, error=JobError(code=code, message=message), **payload_changes
    )
    return signal(state, S.JOB_FAILED, payload)


def approval_view(
    state: RunState,
    kind: ArtifactKind,
    *,
    version: int | None = None,
    decision: ApprovalDecision = ApprovalDecision.APPROVED,
    consumed: bool = False,
    **overrides: Any,
) -> ApprovalView:
    """A recorded approval event for `state`'s assessment, by default of the current version."""
    fields: dict[str, Any] = {
        "approval_event_id": uuid.uuid4(),
        "tenant_id": state.tenant_id,
        "organization_id": state.organization_id,
        "assessment_id": state.assessment_id,
        "artifact_kind": kind,
        "artifact_version": version if version is not None else state.artifacts.get(kind, 1),
        "decision": decision,
        "approver_id": "user:approver",
        "consumed": consumed,
    }
    if "approver_role" in overrides:  # one role named: the event carries that one
        overrides["approver_roles"] = (overrides.pop("approver_role"),)
    fields.update(overrides)
    return ApprovalView(**fields)


def approval(
    state: RunState, kind: ArtifactKind, **view_changes: Any
) -> tuple[SignalEnvelope, ApprovalView]:
    """An approval signal for `kind` and the (by default valid) approval event it names."""
    view = approval_view(state, kind, **view_changes)
    envelope = signal(state, APPROVAL_SIGNAL_FOR[kind], approval_event_id=view.approval_event_id)
    return envelope, view


# --- driving a run --------------------------------------------------------------------------


def next_signal(state: RunState) -> tuple[SignalEnvelope, ApprovalView | None]:
    """The signal (and approval event) that moves `state` one step on along the happy path."""
    if state.status is WorkflowStatus.PENDING:
        return start_signal(state), None
    if state.status is WorkflowStatus.BLOCKED:
        return resume_signal(state), None
    if state.status is WorkflowStatus.FAILED:
        return retry_signal(state), None
    assert state.step is not None and not state.status.is_terminal, state
    spec = STEP_SPECS[state.step]
    if spec.kind is StepKind.JOB:
        return job_done(state), None
    if state.step is Step.WAIT_FOR_DOCUMENTS:
        return signal(state, S.DOCUMENTS_UPLOADED, {"document_count": 3}), None
    if state.step is Step.WAIT_FOR_FRAMEWORK_SELECTION:
        return framework_signal(state), None
    kind = next(k for k, wait in APPROVAL_WAIT_FOR.items() if wait is state.step)
    return approval(state, kind)


def advance(state: RunState) -> Decision:
    envelope, view = next_signal(state)
    return decide(state, envelope, view)


def drive(
    state: RunState | None = None, *, until: Callable[[RunState], bool], limit: int = 60
) -> tuple[RunState, list[Decision]]:
    """Advance along the happy path until `until(state)`; every decision must apply."""
    state = state or new_state()
    decisions: list[Decision] = []
    while not until(state):
        assert len(decisions) < limit, f"no progress towards the goal from {state}"
        decision = advance(state)
        assert decision.fate is SignalFate.APPLIED, decision
        decisions.append(decision)
        state = decision.state
    return state, decisions


def drive_to(step: Step, state: RunState | None = None) -> RunState:
    """A run driven from the start until it sits at (non-inline) `step`."""
    assert STEP_SPECS[step].kind is not StepKind.INLINE, "inline steps complete at once"
    final, _ = drive(state, until=lambda s: s.step is step)
    return final


def run_to_completion(state: RunState | None = None) -> tuple[RunState, list[Decision]]:
    return drive(state, until=lambda s: s.status is WorkflowStatus.COMPLETED)


# --- reading effects ------------------------------------------------------------------------


def _effects(source: Decision | Sequence[Effect]) -> Sequence[Effect]:
    return source.effects if isinstance(source, Decision) else source


def audits(
    source: Decision | Sequence[Effect], event_type: AuditEventType | None = None
) -> list[Audit]:
    return [
        e
        for e in _effects(source)
        if isinstance(e, Audit) and (event_type is None or e.event_type is event_type)
    ]


def signal_audits(source: Decision | Sequence[Effect]) -> list[Audit]:
    return [a for a in audits(source) if a.event_type in SIGNAL_AUDITS]


def step_changes(
    source: Decision | Sequence[Effect], status: StepStatus | None = None, step: Step | None = None
) -> list[StepChanged]:
    return [
        e
        for e in _effects(source)
        if isinstance(e, StepChanged)
        and (status is None or e.status is status)
        and (step is None or e.step is step)
    ]


def entered(source: Decision | Sequence[Effect]) -> list[Step]:
    """Steps a decision entered, in order."""
    return [c.step for c in step_changes(source, StepStatus.RUNNING)]


def completed(source: Decision | Sequence[Effect]) -> list[Step]:
    return [c.step for c in step_changes(source, StepStatus.COMPLETED)]


def effects_of(source: Decision | Sequence[Effect], kind: type[EffectT]) -> list[EffectT]:
    """The effects of one type, in order."""
    return [e for e in _effects(source) if isinstance(e, kind)]


def only_audits(source: Decision | Sequence[Effect]) -> list[Audit]:
    """Every effect, each of which must be an audit (a refused or ignored signal)."""
    effects = _effects(source)
    found = effects_of(effects, Audit)
    assert len(found) == len(effects), f"effects other than audits: {effects}"
    return found


def enqueued(source: Decision | Sequence[Effect]) -> list[EnqueueJob]:
    return effects_of(source, EnqueueJob)


# --- an inbox, like coordinator.apply_pending ---------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One call of decide made by the inbox model."""

    before: RunState
    signal: SignalEnvelope
    approval: ApprovalView | None
    decision: Decision


@dataclass
class Inbox:
    """The coordinator's inbox loop without a database.

    Pending signals stay in arrival order and are offered again after every pass in which
    some signal was decided; applied approval events are marked consumed.
    """

    state: RunState
    approvals: dict[uuid.UUID, ApprovalView] = field(default_factory=dict)
    pending: list[SignalEnvelope] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)

    def record_approval(self, view: ApprovalView) -> None:
        """Store an approval event; an event already stored keeps its consumed mark."""
        self.approvals.setdefault(view.approval_event_id, view)

    def deliver(self, envelope: SignalEnvelope, view: ApprovalView | None = None) -> list[Call]:
        """Record the signal (and the approval event it names) and apply what can be applied."""
        if view is not None:
            self.record_approval(view)
        self.pending.append(envelope)
        return self.apply_pending()

    def apply_pending(self) -> list[Call]:
        decided: list[Call] = []
        rows = list(self.pending)
        while rows:
            undecided = []
            for envelope in rows:
                call = self._decide(envelope)
                if call.decision.fate is SignalFate.PENDING:
                    undecided.append(envelope)
                    continue
                decided.append(call)
                self.state = call.decision.state
                if call.approval is not None and call.decision.fate is SignalFate.APPLIED:
                    self.approvals[call.approval.approval_event_id] = replace(
                        call.approval, consumed=True
                    )
            if len(undecided) == len(rows):
                break
            rows = undecided
        self.pending = rows
        return decided

    def _decide(self, envelope: SignalEnvelope) -> Call:
        view = (
            self.approvals.get(envelope.approval_event_id)
            if envelope.approval_event_id is not None
            else None
        )
        call = Call(self.state, envelope, view, decide(self.state, envelope, view))
        self.calls.append(call)
        return call
