"""On the embedded default one process is every worker: a job's batches are taken by a
thread per core side by side, each batch once, and a failed batch fails the job as it
does with one thread."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from orchestrator.config.settings import reset_settings
from orchestrator.jobs import batches
from orchestrator.jobs.interface import JobFailure
from tests.support.polling import scaled

ITEMS = [f"item-{n}" for n in range(12)]


def _plan(items: list[str], size: int) -> str:
    job_id = f"{uuid.uuid4()}:index_kb:1"
    batches.plan(job_id, uuid.uuid4(), "tenant-alongside", "index_kb", items, size)
    return job_id


def test_two_threads_take_the_batches_side_by_side_each_once(embedded: Path) -> None:
    job_id = _plan(ITEMS, 3)
    # Each thread's first batch waits for the other's: one thread alone would time out.
    both = threading.Barrier(2, timeout=scaled(30))
    firsts: set[str] = set()
    done: list[str] = []
    lock = threading.Lock()

    def work(items: list[str]) -> batches.WriteResults:
        name = threading.current_thread().name
        with lock:
            first = name not in firsts
            firsts.add(name)
        if first:
            both.wait()

        def write(session: Session) -> None:
            with lock:
                done.extend(items)

        return write

    progress = batches.drive_alongside(job_id, work, timeout_s=scaled(60), threads=2)
    assert (progress.done, progress.total, progress.failed) == (4, 4, 0)
    assert sorted(done) == sorted(ITEMS), "every item once"
    assert len(firsts) == 2


def test_a_batch_that_fails_in_a_helper_fails_the_job(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_JOB_BATCH_ATTEMPTS", "1")
    reset_settings()
    job_id = _plan(ITEMS, 6)

    def work(items: list[str]) -> batches.WriteResults:
        if "item-0" in items:
            raise ValueError("this batch cannot be done")
        return lambda session: None

    with pytest.raises(JobFailure) as failed:
        batches.drive_alongside(job_id, work, timeout_s=scaled(60), threads=2)
    assert failed.value.code == "batch_failed" and failed.value.retryable
