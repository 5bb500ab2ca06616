"""Property-based tests of approvals, signoff policies, rejections and rewinds (no database).

A state machine starts runs with random signoff policies per gate and drives random signals
through a model of the coordinator's inbox that keeps its key semantics (first write wins;
the same content again is a duplicate; other content under a used key is a conflict, never
applied). Signals are valid, invalid in every way an approval can be, duplicated, held back
and released in another order, or conflicting. A ledger written from the spec (it uses the
lifecycle's shape, never GatePolicy, approval_problem or the run's collected approvers)
checks every decision:

- a gate opens only when the distinct valid approvers of that exact version meet its policy;
- a terminal run never changes; each idempotency key is decided at most once;
- a rejected version is never approved; reprocessing without the new-version flag never
  drafts a new version of an approvable artifact;
- folding decide over the signals whose decision audited lifecycle_workflow_signal_received
  rebuilds the run's state.

A second property offers many events at one gate, for dense coverage of each way an event
can be invalid. A regression test at the end pins a defect these properties found: scope
approvals sent while a rewind redrafts the scope now wait for the new draft.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from orchestrator.contracts.jobs import JobOutcome
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalEnvelope
from orchestrator.contracts.signals import SignalFate as Fate
from orchestrator.contracts.statuses import WorkflowStatus as W
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind
from orchestrator.lifecycle.approval_checks import ApprovalDecision, ApprovalView
from orchestrator.lifecycle.decide import Decision, decide
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, SCOPE_APPROVAL_DEADLINE, STEP_SPECS
from orchestrator.lifecycle.effects import Audit, ConsumeApproval, EnqueueJob
from orchestrator.lifecycle.state import RunState
from tests.support.decisions import (
    APPROVAL_SIGNAL_FOR,
    JOB_STEPS,
    VALID_ASSESSMENT,
    WORKER,
    E,
    Inbox,
    S,
    approval,
    approval_view,
    completed,
    control_signal,
    drive_to,
    effects_of,
    job_done,
    job_failed,
    new_state,
    outcome_payload,
    position,
    signal,
)

# --- the oracle's own reading of signoff policies ------------------------------------------------

PEOPLE = ("user:ana", "user:bo", "user:cy", "user:di")
OUTSIDER = "user:mallory"
"""Never designated: approves only gates whose policy designates nobody."""
ROLES = ("assessor", "compliance_lead", "ciso", "auditor")
DEFAULT_ROLES = frozenset({"assessor", "compliance_lead", "ciso"})
APPROVABLE = (ArtifactKind.SCOPE, *APPROVAL_WAIT_FOR)
GATES = tuple(APPROVAL_WAIT_FOR)
#: The step drafting each artifact kind (the lifecycle's shape, from the spec).
PRODUCER = {spec.produces: step for step, spec in STEP_SPECS.items() if spec.produces}


@dataclass(frozen=True)
class Signoff:
    """Who may approve a gate and when enough of them have (written from the spec)."""

    mode: str = "single"
    approvers: frozenset[str] = frozenset()
    roles: frozenset[str] = DEFAULT_ROLES
    required: int = 1
    separation: bool = True

    @classmethod
    def of(cls, policy: dict[str, Any] | None) -> Signoff:
        if policy is None:
            return cls()
        return cls(
            policy["mode"],
            frozenset(policy["approvers"]),
            frozenset(policy["roles"]),
            policy.get("required", 1),
            policy["separation_of_duties"],
        )

    def allows(self, approver: str, roles: Iterable[str]) -> bool:
        return bool(self.roles & set(roles)) and (not self.approvers or approver in self.approvers)

    def met_by(self, approvers: Iterable[str]) -> bool:
        counted = set(approvers)
        designated = counted & self.approvers
        if self.mode == "single":
            return bool(counted)
        if self.mode == "unanimous":
            return designated == self.approvers
        if self.mode == "majority":
            return 2 * len(designated) > len(self.approvers)
        return len(designated) >= self.required


@st.composite
def signoff_policies(draw: st.DrawFn) -> dict[str, Any] | None:
    """A start request's policy for one gate; None keeps the default."""
    mode = draw(st.sampled_from(["default", "single", "unanimous", "majority", "n_of_m"]))
    if mode == "default":
        return None
    designated = draw(st.lists(st.sampled_from(PEOPLE), min_size=2, max_size=4, unique=True))
    if mode == "single" and draw(st.booleans()):
        designated = []
    policy: dict[str, Any] = {
        "mode": mode,
        "approvers": designated,
        "roles": draw(st.lists(st.sampled_from(ROLES), min_size=1, max_size=3, unique=True)),
        "separation_of_duties": draw(st.booleans()),
    }
    if mode == "n_of_m":
        policy["required"] = draw(st.integers(1, len(designated)))
    return policy


def policy_sets() -> st.SearchStrategy[dict[str, dict[str, Any]]]:
    return st.fixed_dictionaries({kind.value: signoff_policies() for kind in APPROVABLE}).map(
        lambda policies: {k: p for k, p in policies.items() if p is not None}
    )


# --- the ledger: what must be true of every decision ---------------------------------------------


def rewind_of(envelope: SignalEnvelope) -> tuple[Step, bool] | None:
    """The step a reprocess or revision request rewinds to, and its new-version flag."""
    payload = envelope.payload
    try:
        if envelope.type is S.STEP_REPROCESS_REQUESTED:
            return Step(str(payload.get("step"))), bool(payload.get("new_version"))
        if envelope.type is S.ARTIFACT_REVISION_REQUESTED:
            return PRODUCER[ArtifactKind(str(payload.get("artifact_kind")))], True
    except (ValueError, KeyError):
        pass
    return None


def downstream(target: Step) -> list[ArtifactKind]:
    """Approvable kinds drafted at or after `target`."""
    return [k for k in APPROVABLE if position(PRODUCER[k]) >= position(target)]


@dataclass
class Ledger:
    """Independent bookkeeping of approvals, drafts and keys, checked on each decision."""

    signoffs: dict[ArtifactKind, Signoff]
    counted: dict[ArtifactKind, set[str]] = field(default_factory=dict)
    """Distinct valid approvers of the current draft since it was drafted or rewound."""
    used: set[uuid.UUID] = field(default_factory=set)
    born_used: set[uuid.UUID] = field(default_factory=set)
    drafter: dict[ArtifactKind, str] = field(default_factory=dict)
    earlier: dict[ArtifactKind, set[str]] = field(default_factory=dict)
    """Who drafted a version of the kind since its last approved one, before the current
    drafter: separation of duties bars them too."""
    rejected_versions: set[tuple[ArtifactKind, int]] = field(default_factory=set)
    superseded: dict[ArtifactKind, int] = field(default_factory=dict)
    licensed: set[ArtifactKind] = field(default_factory=set)
    """Kinds a new-version request allows to be drafted again."""
    decided_keys: set[str] = field(default_factory=set)
    conflicted: set[uuid.UUID] = field(default_factory=set)

    def signoff(self, kind: ArtifactKind) -> Signoff:
        return self.signoffs.get(kind, Signoff())

    def barred(self, kind: ArtifactKind, person: str) -> bool:
        """Separation of duties: they drafted this version or an earlier unapproved one."""
        drafted = {self.drafter.get(kind), *self.earlier.get(kind, set())}
        return self.signoff(kind).separation and person in drafted

    def window(self, state: RunState, kind: ArtifactKind) -> str:
        """'open' when an approval of `kind` may be decided now; 'superseded' for a scope
        whose draft a rewind replaced, when approvals of it must wait (see the regression
        test below); 'closed' otherwise."""
        if state.status in (W.PENDING, W.BLOCKED, W.FAILED) or state.status.is_terminal:
            return "closed"
        if kind is not ArtifactKind.SCOPE:
            return "open" if state.step is APPROVAL_WAIT_FOR[kind] else "closed"
        if kind not in state.artifacts or (
            position(state.step) > position(SCOPE_APPROVAL_DEADLINE)
        ):
            return "closed"
        return "superseded" if kind in self.superseded else "open"

    def faults(
        self,
        state: RunState,
        kind: ArtifactKind,
        envelope: SignalEnvelope,
        view: ApprovalView | None,
        approving: bool,
    ) -> set[str]:
        """Every reason this event may not count for `kind` now (empty: it may)."""
        if view is None or view.approval_event_id != envelope.approval_event_id:
            return {"missing"}
        signoff = self.signoff(kind)
        version = view.artifact_version
        checks = {
            "foreign": (view.tenant_id, view.organization_id, view.assessment_id)
            != (state.tenant_id, state.organization_id, state.assessment_id),
            "kind": view.artifact_kind is not kind,
            "version": version != state.artifacts.get(kind),
            "rejected version": (kind, version) in self.rejected_versions,
            "superseded": self.superseded.get(kind) == version,
            "decision": (view.decision is ApprovalDecision.APPROVED) is not approving,
            "consumed": view.approval_event_id in self.used | self.born_used,
            "ineligible": not signoff.allows(view.approver_id, view.approver_roles),
            "drafter": signoff.separation and self.drafter.get(kind) == view.approver_id,
            "earlier drafter": signoff.separation
            and view.approver_id in self.earlier.get(kind, set()),
        }
        return {fault for fault, found in checks.items() if found}

    # --- one decision ---

    def check(
        self,
        before: RunState,
        envelope: SignalEnvelope,
        view: ApprovalView | None,
        decision: Decision,
    ) -> None:
        if decision.fate is Fate.PENDING:
            assert decision.state == before and decision.effects == ()
            return
        key = envelope.idempotency_key
        assert key not in self.decided_keys, f"idempotency key {key} decided twice"
        assert envelope.signal_id not in self.conflicted, "a conflicting signal was decided"
        self.decided_keys.add(key)
        after = decision.state
        if before.status.is_terminal:
            assert after == before, "a terminal run changed"
            assert decision.fate is Fate.IGNORED and len(decision.effects) == 1
            return
        if envelope.type.is_approval:
            self._approval(before, envelope, view, decision)
        elif envelope.type is S.APPROVAL_REJECTED:
            self._rejection(before, envelope, view, decision)
        elif envelope.type.is_job_outcome:
            self._draft(before, envelope, decision)
        elif rewind_of(envelope) is not None:
            self._rewind(before, envelope, decision)
        self._gates(before, envelope, decision)
        if _redrafts_report(before, envelope, decision):
            # The report shows the scope's approval: it is drafted again, no flag needed.
            self.licensed.add(ArtifactKind.REPORT)
        self._new_versions_are_licensed(decision)

    def _approval(
        self,
        before: RunState,
        envelope: SignalEnvelope,
        view: ApprovalView | None,
        decision: Decision,
    ) -> None:
        kind = APPROVAL_SIGNALS[envelope.type]
        faults = self.faults(before, kind, envelope, view, approving=True)
        window, already = self.window(before, kind), before.is_approved(kind)
        counted = self.counted.setdefault(kind, set())
        assert window != "superseded", f"scope decided while redrafted: {decision.reason}"
        if decision.fate is not Fate.APPLIED:
            assert not effects_of(decision, ConsumeApproval)
            if window == "open" and not already and faults:
                assert decision.fate is Fate.REJECTED, (faults, decision.reason)
            elif window == "open" and not already:
                assert view is not None and view.approver_id in counted, (
                    f"a valid approval was {decision.fate}: {decision.reason}"
                )
                assert decision.fate is Fate.IGNORED
            return
        assert view is not None and window != "closed" and not already, decision.reason
        assert not faults, f"an invalid event was applied: {faults}"
        assert view.approver_id not in counted, "one approver counted twice for one draft"
        assert effects_of(decision, ConsumeApproval) == [
            ConsumeApproval(
                view.approval_event_id,
                kind,
                view.artifact_version,
                opens_gate=self.signoff(kind).met_by(counted | {view.approver_id}),
            )
        ]
        self.used.add(view.approval_event_id)
        counted.add(view.approver_id)
        event(f"approval counted: {self.signoff(kind).mode}")

    def _rejection(
        self,
        before: RunState,
        envelope: SignalEnvelope,
        view: ApprovalView | None,
        decision: Decision,
    ) -> None:
        if view is None:
            assert decision.fate is Fate.REJECTED
            return
        kind = view.artifact_kind
        faults = self.faults(before, kind, envelope, view, approving=False)
        window, already = self.window(before, kind), before.is_approved(kind)
        assert window != "superseded", f"scope decided while redrafted: {decision.reason}"
        after = decision.state
        if decision.fate is not Fate.APPLIED:
            if window == "open" and not already:
                assert decision.fate is Fate.REJECTED and faults, decision.reason
            return
        assert window != "closed" and not already, decision.reason
        assert not faults, f"an invalid event was applied: {faults}"
        version = view.artifact_version
        self.used.add(view.approval_event_id)
        self.rejected_versions.add((kind, version))
        self.counted[kind] = set()
        assert after.rejected.get(kind) == version and after.step is before.step
        assert after.approved.get(kind) == before.approved.get(kind)
        if kind is not ArtifactKind.SCOPE:
            assert after.status is W.WAITING_FOR_INPUT
        event("rejection applied")

    def _draft(self, before: RunState, envelope: SignalEnvelope, decision: Decision) -> None:
        if decision.fate is not Fate.APPLIED or envelope.type is S.JOB_FAILED:
            return
        outcome = JobOutcome.model_validate(envelope.payload)
        assert before.step is not None
        kind = STEP_SPECS[before.step].produces
        if kind is None or not outcome.succeeded:
            return
        if kind in APPROVABLE and kind in before.artifacts:
            assert kind in self.licensed, f"{kind} redrafted without the new-version flag"
            event("new version drafted")
        self.licensed.discard(kind)
        self.superseded.pop(kind, None)
        self.counted[kind] = set()
        previous = self.drafter.get(kind)
        if previous is not None and previous != outcome.actor_id and not before.is_approved(kind):
            self.earlier.setdefault(kind, set()).add(previous)
        self.drafter[kind] = outcome.actor_id

    def _rewind(self, before: RunState, envelope: SignalEnvelope, decision: Decision) -> None:
        rewind = rewind_of(envelope)
        assert rewind is not None
        target, new_version = rewind
        existing = [k for k in downstream(target) if k in before.artifacts]
        if not new_version and existing:
            assert decision.fate is Fate.REJECTED, "reprocessing would redraft without the flag"
        if decision.fate is not Fate.APPLIED:
            return
        after = decision.state
        assert after.step is target
        if not new_version:
            assert not existing and after.artifacts == before.artifacts
            event("reprocess without new version applied")
            return
        self.licensed.update(downstream(target))
        for kind in existing:
            self.superseded[kind] = before.artifacts[kind]
            self.counted[kind] = set()
            assert kind not in after.approved, "an approval of a superseded draft still counts"
        event(f"rewind with new version to {target.value}")

    def _gates(self, before: RunState, envelope: SignalEnvelope, decision: Decision) -> None:
        """A gate opens only here: an applied approval that completed its policy."""
        after = decision.state
        for kind in APPROVABLE:
            old, new = before.approved.get(kind), after.approved.get(kind)
            opened = new is not None and new != old
            if opened:
                self.earlier.pop(kind, None)
                assert envelope.type is APPROVAL_SIGNAL_FOR[kind], "a gate opened by another signal"
                assert new == before.artifacts[kind]
                event(f"gate opened: {kind.value}, {self.signoff(kind).mode}")
            if envelope.type is APPROVAL_SIGNAL_FOR[kind] and decision.fate is Fate.APPLIED:
                assert opened is self.signoff(kind).met_by(self.counted[kind]), (
                    kind,
                    self.signoff(kind),
                    self.counted[kind],
                )
                if kind is not ArtifactKind.SCOPE:
                    assert (APPROVAL_WAIT_FOR[kind] in completed(decision)) is opened

    def _new_versions_are_licensed(self, decision: Decision) -> None:
        for job in effects_of(decision, EnqueueJob):
            kind = job.parameters.get("artifact_kind")
            if kind in APPROVABLE and job.parameters["artifact_version"] > 1:
                assert ArtifactKind(kind) in self.licensed, f"{kind} redrafted without the flag"

    # --- the run as it stands ---

    def check_state(self, state: RunState) -> None:
        for kind, version in state.approved.items():
            assert (kind, version) not in self.rejected_versions, (
                f"rejected {kind.value} v{version} is approved"
            )
        passed = 99 if state.status is W.COMPLETED else position(state.step)
        for kind in GATES:
            if position(APPROVAL_WAIT_FOR[kind]) < passed:
                assert state.is_approved(kind), f"the {kind.value} gate passed while closed"


def _redrafts_report(before: RunState, envelope: SignalEnvelope, decision: Decision) -> bool:
    return (
        envelope.type is S.SCOPE_APPROVED
        and decision.fate is Fate.APPLIED
        and before.step is Step.WAIT_FOR_REPORT_APPROVAL
        and decision.state.is_approved(ArtifactKind.SCOPE)
    )


def replayed(calls: Iterable[Any], start: RunState) -> RunState:
    """Fold decide over the signals whose decisions audited them as received, in order."""
    state = start
    for call in calls:
        if not any(
            isinstance(e, Audit) and e.event_type is E.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED
            for e in call.decision.effects
        ):
            continue
        view = replace(call.approval, consumed=False) if call.approval is not None else None
        decision = decide(state, call.signal, view)
        assert decision.fate is Fate.APPLIED, decision.reason
        state = decision.state
    return state


# --- the state machine ----------------------------------------------------------------------------

Choose = Callable[[Sequence[Any]], Any]
"""Picks one of a few values: hypothesis' choice in rules, the first one in teardown."""


def chooser(data: st.DataObject) -> Choose:
    return lambda values: data.draw(st.sampled_from(values))


def first(values: Sequence[Any]) -> Any:
    return values[0]


APPROVAL_VARIANTS = (
    "valid",
    "valid",
    "valid",
    "random",
    "stale_version",
    "future_version",
    "wrong_role",
    "outsider",
    "drafter",
    "wrong_kind",
    "wrong_tenant",
    "other_assessment",
    "decision_rejected",
    "consumed",
    "counted_again",
    "counted_again",
    "reuse",
    "missing",
)
REJECTION_VARIANTS = (
    "valid",
    "valid",
    "random",
    "approves",
    "stale_version",
    "wrong_role",
    "drafter",
    "reuse",
    "missing",
)
REASONS = ("", "source data fixed", "reviewer asked for changes")
"""A command without a reason is refused."""
OUTCOME_VARIANTS = ("done", "done", "done", "failed", "stale", "stale_new_key")
SETTINGS = settings(
    max_examples=100,
    deadline=None,
    stateful_step_count=40,
    suppress_health_check=[HealthCheck.too_slow],
)


class ApprovalMachine(RuleBasedStateMachine):
    """Random approvals, rejections, rewinds and run control through a keyed inbox model."""

    def __init__(self) -> None:
        super().__init__()
        self.inbox = Inbox(new_state())
        self.ledger = Ledger({})
        self.first_hash: dict[str, str] = {}
        self.history: list[tuple[SignalEnvelope, ApprovalView | None]] = []
        self.views: dict[uuid.UUID, ApprovalView] = {}
        self.held: list[tuple[SignalEnvelope, ApprovalView | None]] = []
        self.job_ids: list[str] = []
        self.checked = 0

    @property
    def state(self) -> RunState:
        return self.inbox.state

    # --- the inbox's key semantics ---

    def _send(self, envelope: SignalEnvelope, view: ApprovalView | None = None) -> None:
        key, digest = envelope.idempotency_key, envelope.content_hash()
        first = self.first_hash.get(key)
        if first is not None:
            if first != digest:
                self.ledger.conflicted.add(envelope.signal_id)
            event("same key: " + ("duplicate" if first == digest else "conflict"))
            return  # a duplicate stores nothing; a conflict is recorded, never applied
        self.first_hash[key] = digest
        self.history.append((envelope, view))
        if view is not None:
            self.views.setdefault(view.approval_event_id, view)
        self.inbox.deliver(envelope, view)
        for call in self.inbox.calls[self.checked :]:
            self.ledger.check(call.before, call.signal, call.approval, call.decision)
            self.job_ids += [job.job_id for job in effects_of(call.decision, EnqueueJob)]
        self.checked = len(self.inbox.calls)

    # --- building signals ---

    def _approver(self, choose: Choose, kind: ArtifactKind) -> tuple[str, str]:
        """An approver who may count now for `kind`, or any person when none may."""
        signoff = self.ledger.signoff(kind)
        candidates = sorted(signoff.approvers or {*PEOPLE, OUTSIDER})
        fresh = [
            p
            for p in candidates
            if p not in self.ledger.counted.get(kind, set()) and not self.ledger.barred(kind, p)
        ]
        return choose(fresh or candidates), choose(sorted(signoff.roles))

    def _variant(
        self, data: st.DataObject, kind: ArtifactKind, variant: str, decision: ApprovalDecision
    ) -> ApprovalView:
        """An approval event for `kind`: valid, or invalid in the way `variant` names."""
        approver, role = self._approver(chooser(data), kind)
        fields: dict[str, Any] = {
            "approver_id": approver,
            "approver_role": role,
            "decision": decision,
        }
        fields.update(self._spoiled(data, kind, variant, approver))
        view = approval_view(self.state, kind, **fields)
        if view.consumed:
            self.ledger.born_used.add(view.approval_event_id)
        return view

    def _spoiled(
        self, data: st.DataObject, kind: ArtifactKind, variant: str, approver: str
    ) -> dict[str, Any]:
        current = self.state.artifacts.get(kind, 1)
        older = data.draw(st.integers(1, current - 1)) if current > 1 else current + 1
        others = [k for k in APPROVABLE if k is not kind]
        spoilers: dict[str, Any] = {
            "random": lambda: {
                "approver_id": data.draw(st.sampled_from([*PEOPLE, OUTSIDER])),
                "approver_role": data.draw(st.sampled_from(ROLES)),
                "version": data.draw(st.integers(1, current + 1)),
            },
            "stale_version": lambda: {"version": older},
            "future_version": lambda: {"version": current + 1},
            "wrong_role": lambda: {
                "approver_role": next(
                    (r for r in ROLES if r not in self.ledger.signoff(kind).roles), "intern"
                )
            },
            "outsider": lambda: {"approver_id": OUTSIDER},
            "drafter": lambda: {"approver_id": self.ledger.drafter.get(kind, WORKER)},
            "wrong_kind": lambda: {"artifact_kind": data.draw(st.sampled_from(others))},
            "wrong_tenant": lambda: {"tenant_id": "tenant-b"},
            "other_assessment": lambda: {"assessment_id": uuid.uuid4()},
            "decision_rejected": lambda: {
                "decision": data.draw(
                    st.sampled_from([ApprovalDecision.REJECTED, ApprovalDecision.CHANGES_REQUESTED])
                )
            },
            "approves": lambda: {"decision": ApprovalDecision.APPROVED},
            "consumed": lambda: {"consumed": True},
            "counted_again": lambda: {
                "approver_id": data.draw(
                    st.sampled_from(sorted(self.ledger.counted.get(kind) or {approver}))
                )
            },
        }
        spoil = spoilers.get(variant)
        return spoil() if spoil is not None else {}

    def _kind(self, data: st.DataObject) -> ArtifactKind:
        """Mostly the artifact the run awaits; sometimes any approvable kind."""
        step = self.state.step
        awaited = next((k for k, wait in APPROVAL_WAIT_FOR.items() if wait is step), None)
        if (
            awaited is None
            and step is not None
            and position(step) < position(APPROVAL_WAIT_FOR[ArtifactKind.SOA])
        ):
            awaited = ArtifactKind.SCOPE
        choices = [awaited, awaited] if awaited is not None else []
        return data.draw(st.sampled_from([*choices, *APPROVABLE]))

    def _reused(self, data: st.DataObject) -> ApprovalView | None:
        """An event already used by an applied signal, named again by a new signal."""
        used = sorted(self.ledger.used, key=str)
        return self.views[data.draw(st.sampled_from(used))] if used else None

    def _approval_signal(self, kind: ArtifactKind, view: ApprovalView | None) -> SignalEnvelope:
        event_id = view.approval_event_id if view is not None else uuid.uuid4()
        return signal(
            self.state,
            APPROVAL_SIGNAL_FOR[kind],
            approval_event_id=event_id,
            actor_id=view.approver_id if view else OUTSIDER,
            idempotency_key=f"approve:{event_id}:{uuid.uuid4().hex[:6]}",
        )

    def _rejection_signal(self, view: ApprovalView | None) -> SignalEnvelope:
        event_id = view.approval_event_id if view is not None else uuid.uuid4()
        return signal(
            self.state,
            S.APPROVAL_REJECTED,
            approval_event_id=event_id,
            idempotency_key=f"approval:{event_id}:{uuid.uuid4().hex[:6]}",
        )

    def _outcome(self, job_done_signal: SignalEnvelope, actor: str) -> SignalEnvelope:
        """A job's outcome as the runtime posts it: one key per job, the drafter's id."""
        payload = {**job_done_signal.payload, "actor_id": actor}
        return job_done_signal.model_copy(
            update={"payload": payload, "idempotency_key": f"outcome:{payload['job_id']}"}
        )

    def _helpful(self, choose: Choose) -> tuple[SignalEnvelope, ApprovalView | None]:
        """The signal a cooperative team would send now (it may still be refused)."""
        state = self.state
        if state.status is W.BLOCKED:
            return signal(state, S.ASSESSMENT_RESUMED), None
        if state.status is W.FAILED:
            return signal(state, S.STEP_RETRY_REQUESTED, {"reason": "worker back"}), None
        assert state.step is not None and not state.status.is_terminal
        if STEP_SPECS[state.step].kind is StepKind.JOB:
            # A first draft is made for anyone, perhaps a reviewer; a redraft for the worker,
            # so that a policy the drafter blocked (unanimous, separation of duties) can pass.
            drafter = choose([WORKER, *PEOPLE]) if state.attempt(state.step) == 1 else WORKER
            return self._outcome(job_done(state), drafter), None
        if state.step is Step.WAIT_FOR_DOCUMENTS:
            return signal(state, S.DOCUMENTS_UPLOADED, {"document_count": 2}), None
        if state.step is Step.WAIT_FOR_FRAMEWORK_SELECTION:
            return signal(state, S.FRAMEWORK_SELECTED, {"framework": "SCF"}), None
        kind = self._awaited_review()
        assert kind is not None, state
        return self._review(choose, kind)

    def _review(
        self, choose: Choose, kind: ArtifactKind
    ) -> tuple[SignalEnvelope, ApprovalView | None]:
        """Approve the waiting draft, or ask for a new one when nobody may approve this one."""
        signoff = self.ledger.signoff(kind)
        counted = self.ledger.counted.get(kind, set())
        free = {
            p for p in signoff.approvers or {*PEOPLE, OUTSIDER} if not self.ledger.barred(kind, p)
        }
        if not signoff.met_by(counted | free):
            # Everyone the policy needs asked for a version since the last approved one, so
            # nobody may open this gate: the team cancels (in the product an admin would
            # name other approvers).
            return signal(self.state, S.ASSESSMENT_CANCELLED, {"reason": "no approver left"}), None
        approver, role = self._approver(choose, kind)
        stuck = (
            self.state.status is W.WAITING_FOR_INPUT  # sent back by a reviewer
            or approver in self.ledger.counted.get(kind, set())
            or self.ledger.barred(kind, approver)
        )
        if stuck:
            return signal(
                self.state,
                S.ARTIFACT_REVISION_REQUESTED,
                {"artifact_kind": kind.value, "reason": "address review"},
            ), None
        view = approval_view(self.state, kind, approver_id=approver, approver_role=role)
        return self._approval_signal(kind, view), view

    def _stale_outcome(self, job_id: str, actor: str) -> SignalEnvelope:
        """The outcome of an earlier job (or the active one), as its runtime would post it."""
        _, step_name, attempt = job_id.rsplit(":", 2)
        step = Step(step_name)
        spec = STEP_SPECS[step]
        changes: dict[str, Any] = {}
        if spec.produces is not None:
            changes = {
                "artifact_kind": spec.produces,
                "artifact_version": self.state.artifacts.get(spec.produces, 0) + 1,
            }
        payload = outcome_payload(
            self.state, step=step, attempt=int(attempt), job_id=job_id, **changes
        )
        assert spec.completion_signal is not None
        return self._outcome(signal(self.state, spec.completion_signal, payload), actor)

    # --- rules ---

    @initialize(policies=policy_sets(), valid_start=st.sampled_from([True, True, True, False]))
    def start(self, policies: dict[str, dict[str, Any]], valid_start: bool) -> None:
        self.ledger.signoffs = {ArtifactKind(k): Signoff.of(p) for k, p in policies.items()}
        payload: dict[str, Any] = {"approval_policies": policies}
        if valid_start:
            payload["assessment"] = VALID_ASSESSMENT
        self._send(
            signal(
                self.state,
                S.WORKFLOW_START_REQUESTED,
                payload,
                idempotency_key=f"start:{self.state.run_id}",
            )
        )

    @rule(steps=st.integers(1, 10), data=st.data())
    def cooperate(self, steps: int, data: st.DataObject) -> None:
        """Move the run on, stopping at the next approval wait (reviews are other rules)."""
        for _ in range(steps):
            if self.state.status.is_terminal or self._awaited_review() is not None:
                return
            self._send(*self._helpful(chooser(data)))

    @rule(data=st.data())
    def review(self, data: st.DataObject) -> None:
        """A designated reviewer approves the waiting draft (or asks for a new one)."""
        kind = self._awaited_review()
        if kind is not None:
            self._send(*self._review(chooser(data), kind))

    def _awaited_review(self) -> ArtifactKind | None:
        if self.state.status not in (W.WAITING_FOR_APPROVAL, W.WAITING_FOR_INPUT):
            return None
        return next((k for k, wait in APPROVAL_WAIT_FOR.items() if wait is self.state.step), None)

    @rule(
        variant=st.sampled_from(OUTCOME_VARIANTS),
        actor=st.sampled_from([*PEOPLE, WORKER]),
        data=st.data(),
    )
    def job_outcome(self, variant: str, actor: str, data: st.DataObject) -> None:
        """A job finishes (drafted by a random person), fails, or an old job reports late."""
        state = self.state
        if variant.startswith("stale") and self.job_ids:
            envelope = self._stale_outcome(data.draw(st.sampled_from(self.job_ids)), actor)
            if variant == "stale_new_key":
                envelope = envelope.model_copy(update={"idempotency_key": f"late:{uuid.uuid4()}"})
            self._send(envelope)
        elif state.active_job_id is not None and variant == "failed":
            # no_documents sends an ingestion back to the documents wait instead of failing
            code = data.draw(st.sampled_from(["worker_crashed", "no_documents"]))
            self._send(self._outcome(job_failed(state, code=code), actor))
        elif state.active_job_id is not None:
            self._send(self._outcome(job_done(state), actor))

    @rule(variant=st.sampled_from(APPROVAL_VARIANTS), data=st.data())
    def approve(self, variant: str, data: st.DataObject) -> None:
        kind = self._kind(data)
        view = (
            self._reused(data)
            if variant == "reuse"
            else None
            if variant == "missing"
            else self._variant(data, kind, variant, ApprovalDecision.APPROVED)
        )
        self._send(self._approval_signal(kind, view), view)

    @rule(variant=st.sampled_from(REJECTION_VARIANTS), data=st.data())
    def reject(self, variant: str, data: st.DataObject) -> None:
        kind = self._kind(data)
        decision = data.draw(
            st.sampled_from([ApprovalDecision.REJECTED, ApprovalDecision.CHANGES_REQUESTED])
        )
        view = (
            self._reused(data)
            if variant == "reuse"
            else None
            if variant == "missing"
            else self._variant(data, kind, variant, decision)
        )
        self._send(self._rejection_signal(view), view)

    @rule(data=st.data(), reason=st.sampled_from(REASONS), actor=st.sampled_from(PEOPLE))
    def revise(self, data: st.DataObject, reason: str, actor: str) -> None:
        kind = self._kind(data)
        self._send(
            signal(
                self.state,
                S.ARTIFACT_REVISION_REQUESTED,
                {"artifact_kind": kind.value, "reason": reason},
                actor_id=actor,
            )
        )

    @rule(
        step=st.sampled_from([*JOB_STEPS, Step.WAIT_FOR_GAP_APPROVAL]),
        new_version=st.booleans(),
        reason=st.sampled_from(REASONS),
        actor=st.sampled_from(PEOPLE),
    )
    def reprocess(self, step: Step, new_version: bool, reason: str, actor: str) -> None:
        self._send(
            signal(
                self.state,
                S.STEP_REPROCESS_REQUESTED,
                {"step": step.value, "new_version": new_version, "reason": reason},
                actor_id=actor,
            )
        )

    @rule(
        kind=st.sampled_from(["block", "block", "resume", "resume", "retry", "cancel"]),
        reason=st.sampled_from(["", "auditor away"]),
    )
    def control(self, kind: str, reason: str) -> None:
        self._send(control_signal(self.state, kind, reason))

    @precondition(lambda self: self.history)
    @rule(data=st.data(), conflicting=st.booleans())
    def same_key_again(self, data: st.DataObject, conflicting: bool) -> None:
        """A client retry under a used key: the same request, or a different one."""
        envelope, view = data.draw(st.sampled_from(self.history))
        update: dict[str, Any] = {"signal_id": uuid.uuid4()}
        if conflicting:
            update["payload"] = {**envelope.payload, "note": "edited before the retry"}
            if envelope.approval_event_id is not None and data.draw(st.booleans()):
                update["approval_event_id"] = uuid.uuid4()
        self._send(envelope.model_copy(update=update), view)

    @precondition(lambda self: self.history)
    @rule(data=st.data())
    def same_request_new_key(self, data: st.DataObject) -> None:
        """The same request sent again as a new signal: its event is spent by then."""
        envelope, view = data.draw(st.sampled_from(self.history))
        self._send(
            envelope.model_copy(
                update={"signal_id": uuid.uuid4(), "idempotency_key": f"again:{uuid.uuid4()}"}
            ),
            view,
        )

    @rule(data=st.data())
    def hold(self, data: st.DataObject) -> None:
        """Build the signal the run needs now but deliver it later (reordering)."""
        if not self.state.status.is_terminal:
            self.held.append(self._helpful(chooser(data)))

    @precondition(lambda self: self.held)
    @rule(reverse=st.booleans())
    def release(self, reverse: bool) -> None:
        held, self.held = (self.held[::-1] if reverse else self.held), []
        for envelope, view in held:
            self._send(envelope, view)

    @rule()
    def audit_trail_rebuilds_the_state(self) -> None:
        assert replayed(self.inbox.calls, self._fresh()) == self.state

    def _fresh(self) -> RunState:
        state = self.state
        return RunState(
            run_id=state.run_id,
            tenant_id=state.tenant_id,
            organization_id=state.organization_id,
            assessment_id=state.assessment_id,
        )

    @invariant()
    def approvals_and_gates_hold(self) -> None:
        self.ledger.check_state(self.state)

    def teardown(self) -> None:
        """Liveness, then the replay: a cooperative team ends every run the machine left."""
        for _ in range(150):
            if self.state.status.is_terminal:
                break
            self._send(*self._helpful(first))
        assert self.state.status in (W.COMPLETED, W.CANCELLED), self.state
        self.ledger.check_state(self.state)
        assert replayed(self.inbox.calls, self._fresh()) == self.state


ApprovalMachine.TestCase.settings = SETTINGS
TestApprovalMachine = ApprovalMachine.TestCase


# --- many events offered at one wait --------------------------------------------------------------


def _drive_to_wait(machine: ApprovalMachine, kind: ArtifactKind, choose: Choose) -> bool:
    """Cooperate (approving earlier gates by their policies) until the run waits for `kind`;
    False when the team had to cancel on the way (an earlier gate nobody may open)."""
    for _ in range(120):
        if machine._awaited_review() is kind:
            return True
        if machine.state.status.is_terminal:
            return False
        machine._send(*machine._helpful(choose))
    raise AssertionError(f"the run never reached the {kind.value} wait: {machine.state}")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    policies=policy_sets(),
    kind=st.sampled_from(GATES),
    data=st.data(),
    offers=st.lists(
        st.sampled_from(
            [
                "approve",
                "approve",
                "approve",
                "reject",
                "review",
                "review",
                "again",
                "rewind",
                "reprocess",
            ]
        ),
        min_size=1,
        max_size=10,
    ),
)
def test_every_event_offered_at_a_wait_is_judged_by_the_policy(
    policies: dict[str, dict[str, Any]], kind: ArtifactKind, data: st.DataObject, offers: list[str]
) -> None:
    """Dense coverage of the ledger's checks: events valid or invalid in every way, from
    any approver with any role, reach one gate while its draft is the one waiting."""
    machine = ApprovalMachine()
    machine.start(policies, valid_start=True)
    if not _drive_to_wait(machine, kind, chooser(data)):
        machine.teardown()
        return
    for offer in offers:
        if offer == "review":
            machine.review(data)
            continue
        if offer == "rewind":  # new versions are asked for, or a step reprocessed
            machine.revise(data, "reviewer asked for changes", data.draw(st.sampled_from(PEOPLE)))
            continue
        if offer == "reprocess":
            machine.reprocess(
                data.draw(st.sampled_from(JOB_STEPS)),
                data.draw(st.booleans()),
                "source data fixed",
                data.draw(st.sampled_from(PEOPLE)),
            )
            continue
        if offer == "again":  # someone already counted for this draft approves once more
            machine.approve("counted_again", data)
        elif offer == "approve":
            machine.approve(data.draw(st.sampled_from(APPROVAL_VARIANTS)), data)
        else:
            machine.reject(data.draw(st.sampled_from(REJECTION_VARIANTS)), data)
        machine.approvals_and_gates_hold()
    machine.teardown()


# --- the defect the machine tolerates, pinned ----------------------------------------------------


def _scope_rewound(how: str) -> RunState:
    """Scope v1 drafted (and, in one case, sent back); then a rewind asks for scope v2."""
    state = drive_to(Step.CREATE_SOA_DRAFT)
    assert state.artifacts[ArtifactKind.SCOPE] == 1
    if how == "revision_after_rejection":
        _, view = approval(
            state, ArtifactKind.SCOPE, approver_id="user:ana", decision=ApprovalDecision.REJECTED
        )
        sent_back = decide(
            state,
            signal(state, S.APPROVAL_REJECTED, approval_event_id=view.approval_event_id),
            view,
        )
        assert sent_back.fate is Fate.APPLIED and sent_back.state.rejected
        state = sent_back.state
        command = signal(
            state,
            S.ARTIFACT_REVISION_REQUESTED,
            {"artifact_kind": "scope", "reason": "address review"},
        )
    else:
        command = signal(
            state,
            S.STEP_REPROCESS_REQUESTED,
            {"step": "create_scope", "new_version": True, "reason": "new input"},
        )
    rewound = decide(state, command)
    assert rewound.fate is Fate.APPLIED and rewound.state.step is Step.CREATE_SCOPE
    return rewound.state


@pytest.mark.parametrize(
    ("how", "version"),
    [
        ("revision_after_rejection", 1),
        ("reprocess_with_new_version", 1),
        ("reprocess_with_new_version", 2),
    ],
)
def test_scope_approvals_wait_while_a_rewind_redrafts_the_scope(how: str, version: int) -> None:
    """Like every other gate's approvals, they wait (pending) for the new draft: the
    superseded (or rejected) v1 must never be approved, and an approval of v2 recorded as
    soon as the job saved it must not be refused because the outcome is not applied yet."""
    state = _scope_rewound(how)
    envelope, view = approval(state, ArtifactKind.SCOPE, version=version, approver_id="user:bo")
    decision = decide(state, envelope, view)
    assert decision.fate is Fate.PENDING, (decision.fate, decision.reason)
