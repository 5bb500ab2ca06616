"""A claimed batch's lease is as long as a job's, renewed by its holder while it works:
a batch whose holder died or was cut off is taken over within that lease (not minutes
later, while its job's next delivery waits and is sent again and again), and a live
holder's batch is never taken from it however long its work is."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import datetime

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.session import dispose_engines, transaction
from orchestrator.jobs import batches
from tests.support.polling import poll, wait_for

pytestmark = pytest.mark.integration
LEASE_S = 4


@pytest.fixture
def database(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Leases are written and judged on PostgreSQL (on SQLite one process runs them all)."""
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", postgres_url)
    monkeypatch.setenv("LIFECYCLE_SWEEP_JOB_LEASE_S", str(LEASE_S))
    monkeypatch.setenv("LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S", "0.5")
    reset_settings()
    dispose_engines()
    yield
    dispose_engines()
    reset_settings()


def _row(batch: str) -> JobBatch:
    with transaction() as session:
        row = session.scalar(select(JobBatch).where(JobBatch.id == batch))
        assert row is not None
        return row


def _lease_until(batch: str) -> datetime:
    lease = _row(batch).lease_until
    assert lease is not None
    return lease


def test_a_dead_holder_s_batch_is_taken_over_within_a_job_lease_and_a_live_one_s_never(
    database: None,
) -> None:
    job_id = f"{uuid.uuid4()}:index_kb:1"
    dead_batch, live_batch = batches.plan(
        job_id, uuid.uuid4(), "tenant-leases", "index_kb", ["a", "b", "c", "d"], 2
    )
    # One holder claims a batch and dies at once: nothing renews its claim.
    assert batches.claim(dead_batch) is not None
    live = batches.claim(live_batch)
    assert live is not None
    claimed_until = _lease_until(live_batch)
    taken_over: list[batches.Claimed] = []

    def long_work(items: list[str]) -> batches.WriteResults:
        # Works until the dead holder's batch was taken over (its lease lapsed) and its
        # own claim was renewed past the lease it was claimed with.
        claim = poll(
            lambda: batches.claim(dead_batch),
            lambda claim: claim is not None,
            timeout_s=60,
            what="the dead holder's batch to be claimable again",
        )
        assert claim is not None
        taken_over.append(claim)
        wait_for(
            lambda: _lease_until(live_batch) > claimed_until,
            timeout_s=60,
            what="the live holder's claim renewed",
        )
        assert batches.claim(live_batch) is None  # a renewed claim is not taken
        return lambda session: _note(session, items)

    assert batches.run_claimed(live, long_work)

    rows = {batch: _row(batch) for batch in (dead_batch, live_batch)}
    assert (rows[dead_batch].status, rows[dead_batch].attempts) == ("started", 2)
    assert taken_over[0].attempt == 2
    # The live holder's results committed with its mark: nobody took its claim.
    assert (rows[live_batch].status, rows[live_batch].attempts) == ("succeeded", 1)
    assert rows[live_batch].lease_until is None


def test_a_batch_is_claimed_for_one_job_lease(database: None) -> None:
    """What lets a cut-off holder's batch go within seconds: the claim's own lease."""
    job_id = f"{uuid.uuid4()}:ingest_documents:1"
    [batch] = batches.plan(job_id, uuid.uuid4(), "tenant-leases", "ingest_documents", ["a"], 4)
    before = utcnow()
    assert batches.claim(batch) is not None
    after = utcnow()
    lease = _lease_until(batch).timestamp()
    assert before.timestamp() + LEASE_S <= lease <= after.timestamp() + LEASE_S


def _note(session: Session, items: list[str]) -> None:
    """The batch's results, written in the transaction that marks it done."""
    assert items == ["c", "d"]
