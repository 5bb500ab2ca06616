"""Property-based tests of the real coordinator on SQLite: the audit trail replays the run.

Each example starts a run with random signoff policies and applies a random sequence of
what people, operators and workers do, through the same functions the API calls (producer,
record_approval, operations) and the job runtime (run_job with an instant or failing
service). Nothing wakes the coordinator: the test calls coordinate() itself, so signals
pile up, arrive early, and are decided in batches. Requests are repeated under their key,
unchanged (a duplicate) or edited (a conflict). At random points and at the end:

- replay_run(session, run_id) equals the state stored on the run row;
- each idempotency key holds one inbox row, with the content first written under it;
- each decided signal has exactly one audit event, of its fate; pending ones have none;
- no approval event is used by two applied signals, and consumed_by names the one that did;
- every open gate's consumed events for its exact version meet the gate's policy.
"""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.errors import IdempotencyConflict, SignalRejected
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import (
    ApprovalEvent,
    Artifact,
    AuditEvent,
    InboxSignal,
    Job,
    SignalConflict,
    WorkflowRun,
)
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.engine.replay import replay_run
from orchestrator.engine.run_rows import state_of
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from orchestrator.jobs.runtime import Delivery, run_job
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, APPROVED_AT
from orchestrator.service.approval_events import record_approval
from orchestrator.service.operations import (
    block_run,
    cancel_run,
    reprocess_step,
    request_new_version,
    resume_run,
    retry_step,
)
from orchestrator.service.producer import create_assessment, get_run, send_signal, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.testing.instant_jobs import instant_service
from tests.lifecycle.test_approval_properties import (
    APPROVABLE,
    OUTSIDER,
    PEOPLE,
    ROLES,
    Signoff,
    policy_sets,
)
from tests.support.decisions import APPROVAL_SIGNAL_FOR, JOB_STEPS, position
from tests.support.roles import grant

TENANT = "tenant-replay"
OWNER = Actor(TENANT, "user:owner")
FATE_AUDIT = {
    "applied": AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_RECEIVED.value,
    "ignored": AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_IGNORED.value,
    "rejected": AuditEventType.LIFECYCLE_WORKFLOW_SIGNAL_REJECTED.value,
}
REJECTION = SignalType.APPROVAL_REJECTED.value
INPUT_FOR = {
    Step.WAIT_FOR_DOCUMENTS.value: SignalType.DOCUMENTS_UPLOADED,
    Step.WAIT_FOR_FRAMEWORK_SELECTION.value: SignalType.FRAMEWORK_SELECTED,
}


def no_kick(_: uuid.UUID) -> None:
    """The test applies signals itself, when it chooses to."""


def failing_service(context: JobContext) -> JobResult:
    raise JobFailure("source_unreadable", "the source system refused the export")


@dataclass
class Request:
    """A call a client may repeat under its key: unchanged, or edited (a conflict)."""

    call: Callable[..., Any]
    kwargs: dict[str, Any]

    def edited(self) -> dict[str, Any]:
        if "reason" in self.kwargs:
            return {**self.kwargs, "reason": self.kwargs["reason"] + " (edited)"}
        return {**self.kwargs, "payload": {**(self.kwargs.get("payload") or {}), "note": "edited"}}


@dataclass
class Scenario:
    """One run on the embedded database and what the test sent to it."""

    draw: Callable[[st.SearchStrategy[Any]], Any]
    signoffs: dict[ArtifactKind, Signoff]
    run_id: uuid.UUID = field(default_factory=uuid.uuid4)
    requests: dict[str, Request] = field(default_factory=dict)
    first_hash: dict[str, str] = field(default_factory=dict)
    conflicts: Counter[str] = field(default_factory=Counter)

    def start(self, policies: dict[str, Any]) -> None:
        for person in (*PEOPLE, OUTSIDER, OWNER.actor_id):  # each may act in every role
            grant(Actor(TENANT, person), *ROLES)
        assessment = create_assessment(OWNER, "org-1", "Replay properties")
        self.run_id = start_lifecycle(
            OWNER, assessment.id, f"start-{assessment.id}", policies=policies, kick=no_kick
        ).id

    def run(self) -> RunView:
        return get_run(OWNER, self.run_id)

    def choose(self, values: list[Any]) -> Any:
        return self.draw(st.sampled_from(values))

    def key(self, what: str) -> str:
        return f"{what}:{uuid.uuid4().hex[:12]}"

    # --- sending, with the inbox's key semantics on record ---

    def request(self, call: Callable[..., Any], **kwargs: Any) -> None:
        kwargs.setdefault("kick", no_kick)
        key = kwargs["idempotency_key"]
        self.requests[key] = Request(call, kwargs)
        with suppress(SignalRejected):  # recorded, and refused at once with its reason
            call(**kwargs)
        with transaction() as session:
            self.first_hash[key] = session.scalars(
                select(InboxSignal.content_hash).where(
                    InboxSignal.run_id == self.run_id, InboxSignal.idempotency_key == key
                )
            ).one()

    def repeat(self) -> None:
        if not self.requests:
            return
        key = self.choose(sorted(self.requests))
        request = self.requests[key]
        if self.draw(st.booleans()):
            try:
                receipt = request.call(**request.kwargs)
            except SignalRejected:
                return  # the duplicate of a refused signal is refused again
            assert receipt.duplicate, f"the same request under key {key} was stored again"
            return
        try:
            request.call(**request.edited())
        except IdempotencyConflict:
            self.conflicts[key] += 1
        else:
            raise AssertionError(f"an edited request under used key {key} was accepted")

    # --- what people, operators and workers do ---

    def person(self) -> Actor:
        return Actor(TENANT, self.choose([*PEOPLE, OUTSIDER, OWNER.actor_id]))

    def work(self) -> None:
        """Workers run the queued jobs of the run (all succeed, or all fail)."""
        service = self.choose([instant_service] * 4 + [failing_service])
        with transaction() as session:
            requests = [
                JobRequest.model_validate(job.request)
                for job in session.scalars(
                    select(Job).where(Job.run_id == self.run_id, Job.status == "queued")
                )
            ]
        for request in requests:
            run_job(Delivery(request, retries_left=False), service)

    def provide_input(self, kind: SignalType | None = None) -> None:
        """Documents or a framework choice: the one awaited, or either (early or late)."""
        kind = kind or self.choose([SignalType.DOCUMENTS_UPLOADED, SignalType.FRAMEWORK_SELECTED])
        payload = (
            {"document_count": 2} if kind is SignalType.DOCUMENTS_UPLOADED else {"framework": "SCF"}
        )
        self.request(
            send_signal,
            actor=self.person(),
            run_id=self.run_id,
            signal_type=kind,
            idempotency_key=self.key(kind.value),
            payload=payload,
        )

    def awaited(self) -> ArtifactKind:
        """The kind the run waits for; early on the scope; sometimes any kind."""
        step = self.run().current_step
        kind = APPROVED_AT.get(Step(step)) if step else None
        return self.choose([kind or ArtifactKind.SCOPE] * 3 + list(APPROVABLE))

    def versions(self, kind: ArtifactKind) -> list[int]:
        with transaction() as session:
            return sorted(
                session.scalars(
                    select(Artifact.version).where(
                        Artifact.run_id == self.run_id, Artifact.kind == kind.value
                    )
                )
            )

    def reviewer(self, kind: ArtifactKind, fresh_only: bool) -> tuple[str, str] | None:
        """An approver who may still count for the waiting draft (None when nobody may)."""
        signoff = self.signoffs.get(kind, Signoff())
        context = self.run().context
        version = context.get("artifacts", {}).get(kind.value)
        spent = set(context.get("collected", {}).get(kind.value, []))
        if signoff.separation:
            spent.add(context.get("drafted_by", {}).get(kind.value))
        fresh = sorted(p for p in (signoff.approvers or {*PEOPLE, OUTSIDER}) if p not in spent)
        if version is None or (fresh_only and not fresh):
            return None
        people = fresh or [*PEOPLE, OUTSIDER]
        return self.choose(people), self.choose(sorted(signoff.roles))

    def approve(self, valid: bool) -> None:
        """A valid approval of the waiting draft, or one that may be wrong in any way: any
        version, approver, role or decision, sent as the approval of any kind."""
        kind = self.waiting_kind() if valid else self.awaited()
        versions = self.versions(kind) if kind is not None else []
        chosen = self.reviewer(kind, fresh_only=valid) if kind and versions else None
        if kind is None or chosen is None:
            return
        approver, role = chosen
        if valid:
            self.record_and_send(kind, versions[-1], approver, role, "approved", kind)
            return
        self.record_and_send(
            kind,
            self.choose(versions),
            self.choose([approver, *PEOPLE, OUTSIDER]),
            self.choose([role, *ROLES]),
            self.choose(["approved", "approved", "rejected", "changes_requested"]),
            signal_kind=self.choose([kind, kind, *APPROVABLE]),
        )

    def record_and_send(
        self,
        kind: ArtifactKind,
        version: int,
        approver: str,
        role: str,
        decision: str,
        signal_kind: ArtifactKind,
    ) -> None:
        event_id = self.record(kind, version, approver, role, decision)
        if decision != "approved" and self.draw(st.booleans()):
            return  # the rejection itself was the signal
        self.request(
            send_signal,
            actor=Actor(TENANT, approver),
            run_id=self.run_id,
            signal_type=APPROVAL_SIGNAL_FOR[signal_kind],
            idempotency_key=self.key(f"approve:{event_id}"),
            approval_event_id=event_id,
        )

    def record(
        self, kind: ArtifactKind, version: int, approver: str, role: str, decision: str
    ) -> uuid.UUID:
        """Record an approval event; a rejection or request for changes also signals the run."""
        try:
            view = record_approval(
                Actor(TENANT, approver),
                self.run_id,
                kind.value,
                version,
                decision=decision,
                approver_role=role,
                kick=no_kick,
            )
        except SignalRejected as refused:
            return uuid.UUID(refused.details["approval_event_id"])
        return view.id

    def waiting_kind(self) -> ArtifactKind | None:
        run = self.run()
        step = Step(run.current_step) if run.current_step else None
        return APPROVED_AT.get(step) if step is not None else None

    def reject(self) -> None:
        kind = self.awaited()
        versions = self.versions(kind)
        chosen = self.reviewer(kind, fresh_only=False)
        if not versions or chosen is None:
            return
        self.record(
            kind,
            self.choose([versions[-1], versions[-1], *versions]),
            *chosen,
            self.choose(["rejected", "changes_requested"]),
        )

    def reuse_event(self) -> None:
        """Name an event that is already spent (or one that does not exist) again."""
        with transaction() as session:
            spent = sorted(
                session.execute(
                    select(ApprovalEvent.id, ApprovalEvent.artifact_kind).where(
                        ApprovalEvent.run_id == self.run_id, ApprovalEvent.consumed_at.is_not(None)
                    )
                )
            )
        event_id, kind = self.choose(spent) if spent else (uuid.uuid4(), "soa")
        self.request(
            send_signal,
            actor=self.person(),
            run_id=self.run_id,
            signal_type=APPROVAL_SIGNAL_FOR[ArtifactKind(kind)],
            idempotency_key=self.key("reuse"),
            approval_event_id=event_id,
        )

    def revise(self) -> None:
        kind = self.awaited()
        self.request(
            request_new_version,
            actor=self.person(),
            run_id=self.run_id,
            artifact_kind=kind.value,
            reason="reviewer asked for changes",
            idempotency_key=self.key("revise"),
        )

    def reprocess(self) -> None:
        """Rewind to a job step, mostly one the run has reached; mostly with the flag."""
        current = self.run().current_step
        reached = [s for s in JOB_STEPS if current and position(s) <= position(Step(current))]
        self.request(
            reprocess_step,
            actor=self.person(),
            run_id=self.run_id,
            step=self.choose(reached * 3 + list(JOB_STEPS)).value,
            reason="source data fixed",
            new_version=self.choose([True, True, False]),
            idempotency_key=self.key("reprocess"),
        )

    def control(self) -> None:
        operation = self.choose(
            [block_run, resume_run, resume_run, retry_step, retry_step, cancel_run]
        )
        self.request(
            operation,
            actor=self.person(),
            run_id=self.run_id,
            reason="operator",
            idempotency_key=self.key(operation.__name__),
        )

    def cooperate(self) -> None:
        """A cooperative team moves the run on until it waits for a reviewer (or ends).
        Whoever asks for a retry, a resume or a new draft becomes its drafter."""
        for _ in range(8):
            coordinate(self.run_id)
            run = self.run()
            if run.status == "running":
                self.work()
            elif run.status == "blocked":
                self.request(
                    resume_run,
                    actor=self.person(),
                    run_id=self.run_id,
                    reason="unblocked",
                    idempotency_key=self.key("resume"),
                )
            elif run.status == "failed":
                self.request(
                    retry_step,
                    actor=self.person(),
                    run_id=self.run_id,
                    reason="worker back",
                    idempotency_key=self.key("retry"),
                )
            elif run.current_step in INPUT_FOR and run.status == "waiting_for_input":
                self.provide_input(INPUT_FOR[run.current_step])
            else:
                return

    def review(self) -> None:
        """The reviewers answer the wait: approve by the policy, or ask for a new draft."""
        coordinate(self.run_id)
        if self.waiting_kind() is not None and self.run().status.startswith("waiting"):
            self.review_or_revise()
            coordinate(self.run_id)

    def review_or_revise(self) -> None:
        kind = self.waiting_kind()
        assert kind is not None
        chosen = self.reviewer(kind, fresh_only=True)
        if self.run().status == "waiting_for_input" or chosen is None:
            self.request(
                request_new_version,
                actor=self.person(),
                run_id=self.run_id,
                artifact_kind=kind.value,
                reason="address the review",
                idempotency_key=self.key("revise"),
            )
            return
        self.record_and_send(kind, self.versions(kind)[-1], *chosen, "approved", kind)


# --- what must hold of the stored run ------------------------------------------------------------


def check_run(scenario: Scenario) -> None:
    coordinate(scenario.run_id)
    with transaction() as session:
        run = session.get(WorkflowRun, scenario.run_id)
        assert run is not None
        assert replay_run(session, scenario.run_id) == state_of(run)
        rows = list(
            session.scalars(select(InboxSignal).where(InboxSignal.run_id == scenario.run_id))
        )
        audits = list(
            session.scalars(select(AuditEvent).where(AuditEvent.run_id == scenario.run_id))
        )
        check_keys(session, scenario, rows)
        check_signal_audits(rows, audits)
        check_approval_events(session, scenario, rows)
        check_gates(session, scenario, run, rows)


def check_keys(session: Session, scenario: Scenario, rows: list[InboxSignal]) -> None:
    per_key = Counter(row.idempotency_key for row in rows)
    assert max(per_key.values()) == 1, per_key.most_common(1)
    stored = {row.idempotency_key: row.content_hash for row in rows}
    for key, first in scenario.first_hash.items():
        assert stored[key] == first, f"the content under key {key} changed"
    conflicts = Counter(
        session.scalars(
            select(SignalConflict.idempotency_key).where(SignalConflict.run_id == scenario.run_id)
        )
    )
    assert conflicts == scenario.conflicts


def check_signal_audits(rows: list[InboxSignal], audits: list[AuditEvent]) -> None:
    about_signal = Counter(
        (a.event_metadata.get("signal_id"), a.event_type)
        for a in audits
        if a.event_type in FATE_AUDIT.values()
    )
    for row in rows:
        expected = FATE_AUDIT.get(row.fate)
        mine = {
            event: n
            for (signal_id, event), n in about_signal.items()
            if signal_id == str(row.signal_id)
        }
        assert mine == ({expected: 1} if expected else {}), (row.type, row.fate, mine)
    assert sum(about_signal.values()) == sum(row.fate in FATE_AUDIT for row in rows)


def applied_by_event(rows: list[InboxSignal]) -> dict[str, list[InboxSignal]]:
    used: dict[str, list[InboxSignal]] = {}
    for row in rows:
        event_id = row.envelope.get("approval_event_id")
        if event_id and row.fate == "applied":
            used.setdefault(event_id, []).append(row)
    return used


def check_approval_events(session: Session, scenario: Scenario, rows: list[InboxSignal]) -> None:
    used = applied_by_event(rows)
    events = session.scalars(select(ApprovalEvent).where(ApprovalEvent.run_id == scenario.run_id))
    for recorded in events:
        users = used.pop(str(recorded.id), [])
        assert len(users) <= 1, f"approval event {recorded.id} used by {len(users)} signals"
        consumer = users[0].signal_id if users else None
        assert recorded.consumed_by_signal_id == consumer
        assert (recorded.consumed_at is None) is (consumer is None)
    assert not used, "an applied signal names an approval event of another run"


def check_gates(
    session: Session, scenario: Scenario, run: WorkflowRun, rows: list[InboxSignal]
) -> None:
    """Passed gates are open for the current version; each open gate's consumed approvals
    for its exact version meet the policy, and no reviewer rejected that version."""
    state = state_of(run)
    passed = 99 if state.status.value == "completed" else position(state.step)
    for kind, wait in APPROVAL_WAIT_FOR.items():
        if position(wait) < passed:
            assert state.is_approved(kind), f"the run passed {wait.value} with the gate closed"
    used = applied_by_event(rows)
    events = {
        str(e.id): e
        for e in session.scalars(
            select(ApprovalEvent).where(ApprovalEvent.run_id == scenario.run_id)
        )
    }
    for kind in APPROVAL_WAIT_FOR:
        version = state.approved.get(kind)
        if version is None:
            continue
        counted = [
            events[event_id]
            for event_id, users in used.items()
            if events[event_id].artifact_kind == kind.value
            and events[event_id].artifact_version == version
        ]
        approvals = [e for e in counted if used[str(e.id)][0].type != REJECTION]
        assert len(approvals) == len(counted), f"{kind.value} v{version} was rejected"
        signoff = scenario.signoffs.get(kind, Signoff())
        assert all(signoff.allows(e.approver_id, e.approver_roles) for e in approvals)
        assert all(APPROVAL_SIGNALS[SignalType(used[str(e.id)][0].type)] is kind for e in approvals)
        assert signoff.met_by(e.approver_id for e in approvals), (kind, signoff, approvals)


# --- the property --------------------------------------------------------------------------------

ACTIONS = (
    "cooperate",
    "cooperate",
    "cooperate",
    "review",
    "review",
    "coordinate",
    "work",
    "input",
    "approve",
    "approve_invalid",
    "reject",
    "reject",
    "reuse_event",
    "revise",
    "reprocess",
    "control",
    "repeat",
    "repeat",
    "check",
)


def act(scenario: Scenario, action: str) -> None:
    steps: dict[str, Callable[[], Any]] = {
        "cooperate": scenario.cooperate,
        "review": scenario.review,
        "coordinate": lambda: coordinate(scenario.run_id),
        "work": scenario.work,
        "input": scenario.provide_input,
        "approve": lambda: scenario.approve(valid=True),
        "approve_invalid": lambda: scenario.approve(valid=False),
        "reject": scenario.reject,
        "reuse_event": scenario.reuse_event,
        "revise": scenario.revise,
        "reprocess": scenario.reprocess,
        "control": scenario.control,
        "repeat": scenario.repeat,
        "check": lambda: check_run(scenario),
    }
    steps[action]()


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(policies=policy_sets(), data=st.data())
def test_the_audit_trail_replays_every_run(
    embedded: Path, policies: dict[str, Any], data: st.DataObject
) -> None:
    """Every example is a new run in the fixture's database; its checks concern that run."""
    scenario = Scenario(data.draw, {ArtifactKind(k): Signoff.of(p) for k, p in policies.items()})
    scenario.start(policies)
    for action in data.draw(st.lists(st.sampled_from(ACTIONS), min_size=5, max_size=30)):
        act(scenario, action)
    check_run(scenario)
    for _ in range(data.draw(st.integers(0, 12))):
        scenario.cooperate()
        scenario.review()
    check_run(scenario)
    describe(scenario)


def describe(scenario: Scenario) -> None:
    """What the example reached (hypothesis statistics), to see the property is not vacuous."""
    run = scenario.run()
    event(f"run ended {run.status}")
    for kind in run.context.get("approved", {}):
        event(f"gate opened: {kind}, {scenario.signoffs.get(ArtifactKind(kind), Signoff()).mode}")
    with transaction() as session:
        fates = Counter(
            session.execute(
                select(InboxSignal.type, InboxSignal.fate).where(
                    InboxSignal.run_id == scenario.run_id
                )
            ).all()
        )
    for (signal_type, fate), _ in fates.items():
        event(f"{signal_type} {fate}")
    if scenario.conflicts:
        event("conflicting request under a used key")
