"""A scripted reviewer: answers each wait the way a person would, through the producer.

Used by the demo, the integration tests and the benchmarks. It records a real approval
event for the exact artifact version waiting, then sends the approval signal naming it.
Its actor needs an approver role granted first (orchestrator.roles.grant_role): the
event carries the roles the actor holds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import FleetError
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.demo.roster import CONFIRMED_OWNER
from orchestrator.engine.run_rows import state_of
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.lifecycle.policies import requires_decisions
from orchestrator.service.amendments import amend_artifact
from orchestrator.service.approval_events import record_approval
from orchestrator.service.draft_rows import rows_in, rows_of
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.queries import get_artifact, list_artifacts
from orchestrator.service.read_models import RunView
from orchestrator.service.readiness import artifact_readiness
from orchestrator.service.row_filter import matching_rows

_SIGNAL_FOR_KIND = {kind: signal for signal, kind in APPROVAL_SIGNALS.items()}
#: Who decides rows when the reviewer names nobody: a colleague, never the reviewer (whoever
#: amends a draft may not approve it).
COLLEAGUE = "user:assessment-team@example.org"


@dataclass
class ScriptedReviewer:
    actor: Actor
    framework: str = "SOC 2"
    say: Callable[[str], None] = lambda _: None
    answered: set[tuple[str, str, int]] = field(default_factory=set)
    #: Drafts `amender` amends before the reviewer approves (a gap analysis or POA&M: the
    #: first row's owner, target date and note; the report: the assessor's statement);
    #: whoever amends a draft may not also approve it.
    amend: frozenset[ArtifactKind] = frozenset()
    amender: Actor | None = None
    #: Who decides the rows a gate needs decided (in bulk: the proposed statuses and
    #: owners, confirmed); default: the amender, else a colleague of the reviewer's team.
    decider: Actor | None = None
    categories: list[str] | None = None
    """Categories chosen with the framework (SOC 2: "availability", "privacy", ...)."""
    amended: dict[tuple[str, str], int] = field(default_factory=dict)

    def answer(self, run: RunView) -> bool:
        """Answer the run's current wait once; True when something was sent."""
        step = Step(run.current_step) if run.current_step else None
        if run.status == "waiting_for_input" and step is Step.WAIT_FOR_FRAMEWORK_SELECTION:
            return self._select_framework(run)
        if run.status == "waiting_for_approval" and step in APPROVED_AT:
            return self._approve(run, step)
        return False

    @property
    def colleague(self) -> Actor:
        return self.decider or self.amender or Actor(self.actor.tenant_id, COLLEAGUE)

    def _select_framework(self, run: RunView) -> bool:
        key = (str(run.id), "framework", 0)
        if key in self.answered:
            return False
        self.answered.add(key)
        payload: dict[str, object] = {"framework": self.framework}
        if self.categories is not None:
            payload["categories"] = self.categories
        send_signal(
            self.actor,
            run.id,
            SignalType.FRAMEWORK_SELECTED,
            f"reviewer:{run.id}:framework",
            payload=payload,
        )
        self.say(f"    reviewer selected framework {self.framework}")
        return True

    def prepare(self, run: RunView) -> bool:
        """What the waiting gate needs before its approval (the scope approved, rows
        decided, amendments made); True when something was sent, False once the approval
        itself is all that is left (or nothing waits for one)."""
        step = Step(run.current_step) if run.current_step else None
        if run.status != "waiting_for_approval" or step not in APPROVED_AT:
            return False
        kind = APPROVED_AT[step]
        version = int(run.context["artifacts"][kind.value])
        based_on = self.amended.get((str(run.id), kind.value))
        if based_on is not None and version <= based_on:
            return True  # the amended version is not the one waiting yet
        if kind is ArtifactKind.SOA and self._approve_scope(run):
            return True
        if (
            self.amender is not None
            and kind in self.amend
            and based_on is None
            and self._amend(self.amender, run, kind, version)
        ):
            return True
        return self._decide_undecided(run, kind, version)

    def _approve(self, run: RunView, step: Step) -> bool:
        kind = APPROVED_AT[step]
        version = int(run.context["artifacts"][kind.value])
        based_on = self.amended.get((str(run.id), kind.value))
        if based_on is not None and version <= based_on:
            return False  # the amended version is not the one waiting yet
        if self.prepare(run):
            return True
        return self._record(run, kind, version)

    def _record(self, run: RunView, kind: ArtifactKind, version: int) -> bool:
        key = (str(run.id), kind.value, version)
        if key in self.answered:
            return False
        self.answered.add(key)
        event = record_approval(
            self.actor, run.id, kind.value, version, comment=f"{kind.value} v{version} reviewed"
        )
        send_signal(
            self.actor,
            run.id,
            _SIGNAL_FOR_KIND[kind],
            f"reviewer:{run.id}:{kind.value}:{version}",
            approval_event_id=event.id,
        )
        self.say(f"    reviewer approved {kind.value} v{version}")
        return True

    def _approve_scope(self, run: RunView) -> bool:
        """The scope the SoA rests on, approved first (the report names it otherwise)."""
        drafted = run.context["artifacts"].get(ArtifactKind.SCOPE.value)
        if drafted is None or run.context.get("approved", {}).get("scope") == drafted:
            return False
        return self._record(run, ArtifactKind.SCOPE, int(drafted))

    def _draft_id(self, run: RunView, kind: ArtifactKind, version: int) -> uuid.UUID | None:
        listed = [a for a in list_artifacts(self.actor, run.id, kind.value) if a.version == version]
        return listed[0].id if listed else None

    def _decide_undecided(self, run: RunView, kind: ArtifactKind, version: int) -> bool:
        """Where the gate needs rows decided first, a colleague confirms the proposals in
        bulk (one amendment: a filter per proposed value). A gate whose policy does not
        require decisions is not read at all: the run's context holds the policy."""
        if not requires_decisions(state_of(run).policy(kind), kind):
            return False
        artifact_id = self._draft_id(run, kind, version)
        if artifact_id is None:
            return False
        ready = artifact_readiness(self.actor, run.id, artifact_id)
        if not (ready.required and ready.undecided):
            return False
        content = get_artifact(self.actor, run.id, artifact_id).content
        entries = confirm_proposals(kind, content)
        if not entries:
            return False  # what is left undecided has no proposal to confirm
        receipt = amend_artifact(
            self.colleague,
            run.id,
            artifact_id,
            entries,
            reason="proposals confirmed in the review meeting",
            idempotency_key=f"reviewer:{run.id}:{kind.value}:{version}:decide",
        )
        self.amended[(str(run.id), kind.value)] = receipt.based_on
        self.say(
            f"    {self.colleague.actor_id} decided {len(ready.undecided)} {ready.what} of "
            f"{kind.value} in bulk ({len(entries)} filters): v{receipt.based_on} -> "
            f"v{receipt.version}"
        )
        return True

    def _amend(self, amender: Actor, run: RunView, kind: ArtifactKind, version: int) -> bool:
        """Set an owner, a target date and a note on the draft's first row (the report: its
        assessor statement); the run then waits for approval of the amended version."""
        artifact_id = self._draft_id(run, kind, version)
        if artifact_id is None or rows_of(kind) is None:
            return False
        rows_field, key = rows_in(kind)
        rows = get_artifact(amender, run.id, artifact_id).content.get(rows_field) or []
        if not rows:
            return False
        row = str(rows[0][key])
        changes = statement_changes() if kind is ArtifactKind.REPORT else owner_changes()
        receipt = amend_artifact(
            amender,
            run.id,
            artifact_id,
            [{"row": row, "changes": changes}],
            reason="assign an owner and a target date"
            if kind is not ArtifactKind.REPORT
            else "the assessor's statement",
            idempotency_key=f"reviewer:{run.id}:{kind.value}:{version}:amend",
        )
        self.amended[(str(run.id), kind.value)] = receipt.based_on
        self.say(
            f"    {amender.actor_id} amended {kind.value} row {row} "
            f"({', '.join(c.replace('_', ' ') for c in changes)}): "
            f"v{receipt.based_on} -> v{receipt.version}"
        )
        return True


def owner_changes() -> dict[str, str]:
    target = (utcnow() + timedelta(days=90)).date().isoformat()
    return {
        "owner": CONFIRMED_OWNER,
        "target_date": target,
        "note": "owner and date agreed in the review meeting",
    }


def statement_changes() -> dict[str, str]:
    today = utcnow().date()
    return {
        # Five sample policies cannot cover a framework: a conclusion that says so agrees
        # with the report's figures (workers.reporting.conclusion_check).
        "conclusion": "The uploaded policies document part of the requirements in scope; "
        "the rest are gaps, each tracked in the POA&M with an owner and a target date.",
        "scope_boundary": "The organisation's policies and procedures as uploaded; systems "
        "and vendors are in scope only as those documents describe them.",
        "period_start": today.replace(month=1, day=1).isoformat(),
        "period_end": today.isoformat(),
    }


def confirm_proposals(kind: ArtifactKind, content: dict[str, Any]) -> list[dict[str, Any]]:
    """One bulk entry per proposed value among the undecided rows: the SoA's proposed
    implementation status, a finding's or POA&M item's proposed owner.

    Values are read from the undecided rows only, selected as the amendment service selects
    them: the service refuses a filter that selects no row, so a value proposed only on
    rows already decided gets no entry (and nothing undecided, no entries at all)."""
    undecided = matching_rows(kind.value, content, {"undecided": True})
    if kind is ArtifactKind.SOA:
        field_name, proposed = "implementation_status", "proposed_implementation_status"
    else:
        field_name, proposed = "owner", "proposed_owner"
    values = sorted({str(r[proposed]) for r in undecided if r.get(proposed)})
    entries: list[dict[str, Any]] = [
        {"filter": {"undecided": True, proposed: value}, "changes": {field_name: value}}
        for value in values
        if value != "not_applicable"
    ]
    if any(not r.get(proposed) for r in undecided):
        fallback = "not_implemented" if kind is ArtifactKind.SOA else "Assessment team"
        entries.append(
            {"filter": {"undecided": True, proposed: None}, "changes": {field_name: fallback}}
        )
    return entries


class RunStalled(FleetError, TimeoutError):
    """A run that did not move for the allowed time: where it stands, in a sentence."""

    def __init__(self, run_id: uuid.UUID, where: tuple[str, str | None], quiet_s: float) -> None:
        status, step = where
        at = f"{status} at {step}" if step else status
        super().__init__(
            f"run {run_id} has not moved for {quiet_s:.0f} s ({at}): no step finished and "
            "no batch of its work was done in that time"
        )
        self.run_id = run_id
        self.where = where


class _Watch:
    """When the run last moved, and whether it has been still for too long."""

    def __init__(
        self,
        clock: Callable[[], float],
        limit_s: float,
        since_start: bool,
        progress: Callable[[uuid.UUID], object] | None,
        on_progress: Callable[[object], None] | None,
    ) -> None:
        self.clock, self.limit_s, self.since_start = clock, limit_s, since_start
        self.began = self.moved = clock()
        self.progress, self.on_progress = progress, on_progress
        self.seen: object = None
        self.asked_at = self.began - POLL_PROGRESS_S

    def expired(self) -> bool:
        return self.clock() - (self.began if self.since_start else self.moved) >= self.limit_s

    def move(self) -> None:
        self.moved = self.clock()

    def look(self, run_id: uuid.UUID) -> None:
        """Read the run's batches now and then: a change is progress too."""
        if self.progress is None or self.clock() < self.asked_at + POLL_PROGRESS_S:
            return
        self.asked_at = self.clock()
        seen = self.progress(run_id)
        if seen != self.seen:
            self.seen = seen
            self.move()
            if self.on_progress is not None:
                self.on_progress(seen)


def drive(
    reviewer: ScriptedReviewer,
    run_id: uuid.UUID,
    timeout_s: float = 120.0,
    on_change: Callable[[RunView], None] | None = None,
    *,
    stall_s: float | None = None,
    progress: Callable[[uuid.UUID], object] | None = None,
    on_progress: Callable[[object], None] | None = None,
    read: Callable[[Actor, uuid.UUID], RunView] = get_run,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> RunView:
    """Follow a run, answering its waits, until it completes, fails, blocks or is cancelled.

    Gives up after `timeout_s` in all; or, with `stall_s`, only once the run went that long
    without moving: a new status or step, an answered wait, or a change of
    `progress(run_id)` (its batches done) resets the clock, so a slow run keeps going."""
    limit = stall_s if stall_s is not None else timeout_s
    watch = _Watch(clock, limit, stall_s is None, progress, on_progress)
    last: tuple[str, str | None] | None = None
    pause = POLL_FIRST_S
    while not watch.expired():
        run = read(reviewer.actor, run_id)
        if (run.status, run.current_step) != last:
            if on_change is not None:
                on_change(run)
            pause = POLL_FIRST_S
            watch.move()
        last = (run.status, run.current_step)
        if run.status in _STOPPED:
            return run
        watch.look(run_id)
        if reviewer.answer(run):
            pause = POLL_FIRST_S
            watch.move()
        else:
            sleep(pause)  # a reviewer polling the run's page, not a race fix
            pause = min(pause * 2, POLL_MOST_S)
    raise RunStalled(run_id, last or ("unknown", None), limit)


#: How often the reviewer looks at the run: POLL_FIRST_S after it moved, then twice as
#: long each time it has not, up to POLL_MOST_S (at 100 a second through a minute's job
#: step, the reviewer's reads took 4.5 CPU seconds beside the job workers' 59, on the same
#: cores).
POLL_FIRST_S = 0.01
POLL_MOST_S = 0.05
#: Reading the batches' progress too costs a query: at most twice a second.
POLL_PROGRESS_S = 0.5


_STOPPED = frozenset({"completed", "cancelled", "failed", "blocked"})
