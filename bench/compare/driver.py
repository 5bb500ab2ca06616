"""The people of the fleet benchmark: start N lifecycles and answer each wait as it opens.

One narrow query per poll reads the runs of this round that wait now or have stopped (the
tenant/status index); a second one reads in full only the runs whose wait is new (a run
already answered at its current version is not looked at again). Each answer goes
through the producer exactly as the API would send it: documents uploaded,
framework selected, approvals recorded and signalled.
"""

from __future__ import annotations

import time
import uuid

from sqlalchemy import bindparam, select

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.session import transaction
from orchestrator.db.tables import RUNS
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.service.producer import create_assessment, send_signal, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.service.roles import grant_role

WAITING = ("waiting_for_input", "waiting_for_approval")
#: A run in one of these needs nothing more from the driver (completed, or stuck visibly).
STOPPED = ("completed", "cancelled", "failed", "blocked")
_WAITING_OR_STOPPED = select(RUNS.c.id, RUNS.c.version, RUNS.c.status).where(
    RUNS.c.tenant_id == bindparam("tenant"), RUNS.c.status.in_(WAITING + STOPPED)
)
_RUNS_BY_ID = select(RUNS).where(RUNS.c.id.in_(bindparam("ids", expanding=True)))


class WaitAnswerer:
    def __init__(self, owner: Actor) -> None:
        self.owner = owner
        reviewer = Actor(owner.tenant_id, "user:reviewer")
        grant_role(reviewer.tenant_id, reviewer.actor_id, "assessor", actor_id="bench:admin")
        self.reviewer = ScriptedReviewer(reviewer)
        self.seen: dict[uuid.UUID, int] = {}
        self.polls = 0

    def poll(self) -> tuple[int, int]:
        """Answer every wait that opened since the last poll: (answered, finished runs)."""
        self.polls += 1
        with transaction() as session:
            rows = session.execute(_WAITING_OR_STOPPED, {"tenant": self.owner.tenant_id}).all()
            ids = [
                row.id
                for row in rows
                if row.status in WAITING and self.seen.get(row.id) != row.version
            ]
            fresh = (
                [RunView.of(row) for row in session.execute(_RUNS_BY_ID, {"ids": ids})]
                if ids
                else []
            )
        finished = sum(1 for row in rows if row.status in STOPPED)
        answered = 0
        for run in fresh:
            self.seen[run.id] = run.version
            answered += self._answer(run)
        return answered, finished

    def _answer(self, run: RunView) -> bool:
        if run.current_step == Step.WAIT_FOR_DOCUMENTS.value:
            send_signal(
                self.owner,
                run.id,
                "documents_uploaded",
                f"bench:{run.id}:docs",
                payload={"document_count": 1},
            )
            return True
        return self.reviewer.answer(run)


def create_assessments(owner: Actor, count: int) -> list[uuid.UUID]:
    return [create_assessment(owner, "org", f"bench {i}").id for i in range(count)]


def start_runs(owner: Actor, assessment_ids: list[uuid.UUID]) -> list[uuid.UUID]:
    return [start_lifecycle(owner, a, f"bench-{a}").id for a in assessment_ids]


def new_owner(label: str) -> Actor:
    return Actor(f"bench-{label}-{uuid.uuid4().hex[:6]}", "user:owner")


def drive(answerer: WaitAnswerer, runs: int, poll_s: float, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        answered, finished = answerer.poll()
        if finished >= runs:
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"{runs - finished} of {runs} runs unfinished")
        if not answered:
            time.sleep(poll_s)
