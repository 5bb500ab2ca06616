"""What a run's page shows: the 20 steps with their latest attempt and who approved what,
the documents counted by what ingestion made of each, progress of long work (documents
finished of total while ingestion runs, how long the current step has run), and the
actions open to this person. The parts that move are one fragment the page polls."""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT, STEP_SPECS
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.approval_rights import acting_roles, decision_gates, state_of_view
from orchestrator.service.document_outcomes import DocumentOutcomeView
from orchestrator.service.read_models import (
    ApprovalRecordView,
    BatchProgressView,
    RunView,
    StepView,
)
from orchestrator.service.roles import roles_of

FINISHED_DOCUMENTS = frozenset({"ingested", "duplicate", "failed"})
#: Outcomes in the order a reader wants them: what worked, what did not, what waits.
OUTCOMES = ("ingested", "failed", "duplicate", "uploaded")


@dataclass(frozen=True)
class StepRow:
    step: Step
    kind: str
    status: str
    attempt: int | None
    duration: timedelta | None
    error: str | None
    approvals: list[ApprovalRecordView]
    current: bool
    running_for: timedelta | None = None
    """How long the current attempt has run, while it runs."""


def step_rows(
    run: RunView, steps: list[StepView], approvals: list[ApprovalRecordView]
) -> list[StepRow]:
    latest: dict[str, StepView] = {}
    for execution in steps:
        latest[execution.step] = execution  # listed in the order they began
    rows = []
    for step in STEP_ORDER:
        seen = latest.get(step.value)
        gate = APPROVED_AT.get(step)
        mine = [a for a in approvals if gate is not None and a.artifact_kind == gate.value]
        running = seen is not None and seen.finished_at is None and seen.status == "running"
        rows.append(
            StepRow(
                step=step,
                kind=STEP_SPECS[step].kind.value,
                status=seen.status if seen else "not started",
                attempt=seen.attempt if seen else None,
                duration=_duration(seen.started_at, seen.finished_at) if seen else None,
                error=seen.error if seen else None,
                approvals=mine,
                current=run.current_step == step.value,
                running_for=utcnow() - _aware(seen.started_at) if running and seen else None,
            )
        )
    return rows


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)


def _duration(start: datetime, end: datetime | None) -> timedelta | None:
    return end - start if end is not None else None


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    counts: tuple[tuple[str, int], ...] = ()
    """(outcome, documents) for every outcome seen, in OUTCOMES order."""


def document_progress(documents: list[DocumentOutcomeView]) -> Progress:
    seen = Counter(d.status for d in documents)
    order = [o for o in OUTCOMES if seen[o]] + sorted(set(seen) - set(OUTCOMES))
    return Progress(
        sum(1 for d in documents if d.status in FINISHED_DOCUMENTS),
        len(documents),
        tuple((o, seen[o]) for o in order),
    )


def live_token(
    run: RunView, documents: list[DocumentOutcomeView], batches: list[BatchProgressView]
) -> str:
    """Changes whenever the run, a document's outcome or a fanned-out step's count of
    finished batches does: the page redraws then."""
    outcomes = ",".join(f"{d.document_id}={d.status}" for d in documents)
    digest = hashlib.sha256(outcomes.encode()).hexdigest()[:12]
    finished = sum(b.done + b.failed for b in batches)
    return f"{run.version}-{digest}-{finished}"


@dataclass(frozen=True)
class Actions:
    """Which forms the run page offers this person now."""

    reviews: tuple[tuple[ArtifactKind, int, bool], ...]
    """The drafts waiting for decisions (anyone may read them): kind, version, and
    whether this person may decide it."""
    can_select_framework: bool
    can_request_new_version: ArtifactKind | None
    can_retry: bool
    can_resume: bool
    can_operate: bool

    @property
    def signature(self) -> str:
        """What the actions are: the page keeps its forms (and what is typed in them)
        while this stays the same."""
        return repr(self)


def actions(principal: Principal, run: RunView) -> Actions:
    status = WorkflowStatus(run.status)
    state = state_of_view(run)
    step = Step(run.current_step) if run.current_step else None
    gate = APPROVED_AT.get(step) if step else None
    operate = principal.allows(Scope.OPERATE) and not status.is_terminal
    sent_back = (
        gate
        if status is WorkflowStatus.WAITING_FOR_INPUT
        and gate is not None
        and state.rejected.get(gate) == state.artifacts.get(gate)
        else None
    )
    gates = decision_gates(state)
    held = roles_of(principal.tenant_id, principal.principal) if gates else []
    return Actions(
        reviews=tuple(
            (kind, state.artifacts[kind], bool(acting_roles(principal, state, kind, held)))
            for kind in gates
        ),
        can_select_framework=principal.allows(Scope.SIGNAL)
        and status is WorkflowStatus.WAITING_FOR_INPUT
        and step is Step.WAIT_FOR_FRAMEWORK_SELECTION,
        can_request_new_version=sent_back if operate else None,
        can_retry=operate and status is WorkflowStatus.FAILED,
        can_resume=operate and status is WorkflowStatus.BLOCKED,
        can_operate=operate,
    )
