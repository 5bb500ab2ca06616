"""Driving several runs through a fault: fast sweeps under a real `celery beat`, and a
reviewer that keeps answering while the database or the broker is away."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kombu.exceptions import OperationalError as BrokerUnavailable
from sqlalchemy import func, select
from sqlalchemy.exc import SQLAlchemyError

from orchestrator.config.settings import Settings, get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobKind
from orchestrator.db.models import Document, InboxSignal, Job
from orchestrator.db.ops_models import DeadLetter
from orchestrator.db.session import transaction
from orchestrator.db.storage import put_bytes
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.messages import get_app
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.testing.worker_processes import ROOT
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support import hostile_readers
from tests.support.polling import scaled, wait_for

#: Sweeps every second; a queued job is taken for lost after a few seconds.
FAST_SWEEPS = {
    "LIFECYCLE_SWEEP_INTERVAL_S": "1",
    "LIFECYCLE_SWEEP_GRACE_S": "1",
    "LIFECYCLE_SWEEP_QUEUED_DEADLINE_S": "5",
    "LIFECYCLE_SWEEP_JOB_DEADLINE_S": json.dumps({kind.value: 60 for kind in JobKind}),
    "LIFECYCLE_SWEEP_REDISPATCH_LIMIT": "100",
    # Retries come back within seconds, so a test sees recovery soon after the fault.
    "LIFECYCLE_JOB_RETRY_BACKOFF_S": "1",
    "LIFECYCLE_JOB_RETRY_BACKOFF_MAX_S": "4",
}
#: What the fleet fixture shortens for other tests (a message held by a killed worker comes
#: back in seconds), back at the product's defaults.
DEFAULT_REDELIVERY = {
    "LIFECYCLE_VISIBILITY_TIMEOUT_S": str(Settings.model_fields["visibility_timeout_s"].default),
    "LIFECYCLE_UNACKED_RESTORE_INTERVAL_S": str(
        Settings.model_fields["unacked_restore_interval_s"].default
    ),
}
#: Ingestion workers that also read slow documents (tests/support/hostile_readers.py).
SLOW_READER_ENV = {
    "LIFECYCLE_INGEST_READER_PLUGINS": json.dumps(["tests.support.hostile_readers"]),
}
SAMPLES = ROOT / "orchestrator" / "demo" / "samples"
STOPPED = frozenset({"completed", "cancelled", "failed", "blocked"})
OUTAGE_ERRORS = (SQLAlchemyError, BrokerUnavailable, OSError)


@contextmanager
def beat(
    fleet: Fleet, log_dir: Path, host: tuple[str, ...] = ()
) -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery beat` process with the fleet's environment (on another host: `host`
    prefixes its command)."""
    log = (log_dir / "beat.log").open("ab")
    process = subprocess.Popen(
        [
            *host,
            sys.executable,
            "-m",
            "celery",
            "-A",
            "orchestrator",
            "beat",
            "-l",
            "INFO",
            "-s",
            str(log_dir / "beat-schedule"),
            "--max-interval",
            "1",
        ],
        cwd=ROOT,
        env=fleet.env,
        stdout=log,
        stderr=log,
    )
    try:
        yield process
    finally:
        process.terminate()
        process.wait(timeout=scaled(20))


def start_slow_run(owner: Actor) -> uuid.UUID:
    """A run whose ingestion job takes a few seconds: a sample upload and a slow document
    (stored directly: uploads refuse its test-only type)."""
    assessment = create_assessment(owner, "org-1", "Fault test assessment")
    sample = sorted(SAMPLES.iterdir())[0]
    upload_document(owner, assessment.id, sample.name, sample.read_bytes())
    data = sorted(SAMPLES.iterdir())[1].read_bytes()
    path, digest = put_bytes(get_settings().resolved_storage_dir / "documents", data)
    with transaction() as session:
        session.add(
            Document(
                tenant_id=owner.tenant_id,
                assessment_id=assessment.id,
                filename="slow.md",
                media_type=hostile_readers.SLOW,
                size_bytes=len(data),
                sha256=digest,
                storage_path=str(path),
                status="uploaded",
                uploaded_by=owner.actor_id,
                created_at=utcnow(),
            )
        )
    return start_lifecycle(owner, assessment.id, idempotency_key=f"start-{assessment.id}").id


def jobs_running(run_ids: list[uuid.UUID], step: str | None = None) -> int:
    with transaction() as session:
        query = (
            select(func.count())
            .select_from(Job)
            .where(Job.run_id.in_(run_ids), Job.status == "started")
        )
        if step is not None:
            query = query.where(Job.step == step)
        return int(session.scalar(query) or 0)


class Reviewers:
    """Answers every run's waits; an answer cut short by an outage is given again."""

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.reviewer = ScriptedReviewer(actor)
        self.runs: dict[uuid.UUID, RunView] = {}
        self.outages = 0

    def step(self, run_ids: list[uuid.UUID]) -> bool:
        """One look at every run; True when all have stopped."""
        for run_id in run_ids:
            if run_id in self.runs and self.runs[run_id].status in STOPPED:
                continue
            answered = set(self.reviewer.answered)
            try:
                run = self.runs[run_id] = get_run(self.actor, run_id)
                self._forget_unsent(run_id)
                self.reviewer.answer(run)
            except OUTAGE_ERRORS:
                self.outages += 1
                self.reviewer.answered |= answered  # kept; unsent ones are forgotten later
        return all(self.runs.get(r) is not None and self.runs[r].status in STOPPED for r in run_ids)

    def _forget_unsent(self, run_id: uuid.UUID) -> None:
        """An answer whose signal never reached the inbox is answered again."""
        keys = {key for key in self.reviewer.answered if key[0] == str(run_id)}
        if not keys:
            return
        with transaction() as session:
            sent = set(
                session.scalars(
                    select(InboxSignal.idempotency_key).where(InboxSignal.run_id == run_id)
                )
            )
        for key in keys:
            signal_key = (
                f"reviewer:{run_id}:framework"
                if key[1] == "framework"
                else f"reviewer:{run_id}:{key[1]}:{key[2]}"
            )
            if signal_key not in sent:
                self.reviewer.answered.discard(key)

    def drive(self, run_ids: list[uuid.UUID], timeout_s: float) -> dict[uuid.UUID, RunView]:
        deadline = time.monotonic() + scaled(timeout_s)
        while not self.step(run_ids):
            if time.monotonic() > deadline:
                states = {str(r): (v.status, v.current_step) for r, v in self.runs.items()}
                raise TimeoutError(f"runs not finished after {scaled(timeout_s):g} s: {states}")
            time.sleep(0.05)
        return {run_id: self.runs[run_id] for run_id in run_ids}


def dead_letters(run_ids: list[uuid.UUID]) -> int:
    with transaction() as session:
        return int(
            session.scalar(
                select(func.count()).select_from(DeadLetter).where(DeadLetter.run_id.in_(run_ids))
            )
            or 0
        )


def unrecoverable(fleet: Fleet) -> list[str]:
    """Workers that exited or logged an unrecoverable error."""
    return [
        name
        for name, process in fleet.workers.items()
        if process.poll() is not None or "Unrecoverable error" in fleet.log_of(name)
    ]


def all_answer(names: list[str]) -> bool:
    """Every named worker answers a ping (False while the broker is still coming back)."""
    try:
        replies = get_app().control.ping(destination=names, timeout=0.5)
    except Exception:  # the broker is still coming back
        return False
    return {name for reply in replies for name in reply} >= set(names)


def restarts_under_load(
    fleet: Fleet,
    names: list[str],
    owner: Actor,
    reviewers: Reviewers,
    run_ids: list[uuid.UUID],
    restart: Callable[[], None],
    *,
    times: int,
    answer_timeout_s: float,
) -> list[float]:
    """Restarts the broker `times` times, each while busy: a slow ingestion job runs (its
    message delivered, not acknowledged), and the runs started before it keep the other
    queues busy. After each, every worker in `names` answers again and none gave up.

    Each restart's slow run is appended to `run_ids`; returns the seconds each restart
    took until every worker answered."""
    recoveries = []
    for attempt in range(1, times + 1):
        run_ids.append(start_slow_run(owner))

        def slow_job_running() -> bool:
            reviewers.step(run_ids)  # the other runs go on meanwhile
            return jobs_running(run_ids[-1:], "ingest_documents") > 0

        wait_for(slow_job_running, timeout_s=60, what=f"a running job before restart {attempt}")
        began = time.monotonic()
        restart()
        wait_for(
            lambda: bool(unrecoverable(fleet)) or all_answer(names),
            timeout_s=answer_timeout_s,
            what=f"every worker to answer after restart {attempt}",
        )
        recoveries.append(time.monotonic() - began)
        assert not unrecoverable(fleet), [fleet.log_of(n)[-3000:] for n in unrecoverable(fleet)]
    return recoveries
