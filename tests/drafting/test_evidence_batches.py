"""The evidence analysis fanned out per batch of judgements: any analysis worker computes
a batch from the run's inputs and keeps it in storage with the basis it read; the draft
uses what batches kept from its own basis, judges the rest itself, and its content is the
same as when one process judges everything."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.config.settings import get_settings, reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.session import transaction
from orchestrator.jobs import batches
from orchestrator.jobs.interface import JobContext
from orchestrator.service.progress import batch_progress
from tests.support.services import (
    TENANT,
    USER,
    Kit,
    add_standard_documents,
    kit_database_for_this_process,
    open_kit,
)
from workers.analysis import evidence, evidence_batches
from workers.analysis.judged_ahead import kept_path

SIZE = 7


@pytest.fixture
def kit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kit]:
    """A run whose SoA is approved and ingested: the evidence analysis is next."""
    monkeypatch.setenv("LIFECYCLE_STORAGE_DIR", str(tmp_path / "storage"))
    monkeypatch.setenv("LIFECYCLE_JOB_BATCH_REQUIREMENTS", str(SIZE))
    reset_settings()
    with open_kit(tmp_path) as kit:
        add_standard_documents(kit)
        kit.run_through(Step.INGEST_SOA)
        with kit_database_for_this_process(kit, monkeypatch):
            yield kit


class Counted:
    """Counts the judgements computed in this process, failing once on `poison`."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, poison: tuple[str, ...] = ()) -> None:
        self.calls: list[tuple[str, ...]] = []
        self.poison = poison
        real = evidence.judgement_of

        def judgement_of(judge: Any, key: tuple[str, ...]) -> dict[str, Any]:
            if key == self.poison:
                self.poison = ()
                raise RuntimeError("analysis worker hiccup")
            self.calls.append(key)
            return real(judge, key)

        monkeypatch.setattr(evidence, "judgement_of", judgement_of)
        monkeypatch.setattr(evidence_batches, "judgement_of", judgement_of)


def _request(kit: Kit, job_id: str) -> JobRequest:
    request = kit.context(Step.RUN_EVIDENCE_ANALYSIS, job_id=job_id).request
    kit.session.rollback()  # SQLite: the kit's reads must not keep the write lock
    return request


def _draft(kit: Kit, request: JobRequest) -> dict[str, Any]:
    kit.session.rollback()  # a fresh snapshot, as the job's Prepare reads
    context = JobContext(request=request, session=kit.session, storage_dir=kit.storage_dir)
    try:
        return evidence.run_evidence_analysis(context)
    finally:
        kit.session.rollback()


def _batches(job_id: str) -> list[JobBatch]:
    with transaction() as session:
        rows = session.scalars(select(JobBatch).where(JobBatch.job_id == job_id))
        return sorted(rows, key=lambda b: b.seq)


def _keys(kit: Kit, request: JobRequest) -> list[tuple[str, ...]]:
    context = JobContext(request=request, session=kit.session, storage_dir=kit.storage_dir)
    soa = evidence.require_artifact(context, evidence.ArtifactKind.SOA).content
    scope = evidence.require_artifact(context, evidence.ArtifactKind.SCOPE).content
    kit.session.rollback()
    return evidence.judgement_keys(soa, scope)


def test_the_batches_judge_everything_once_and_the_draft_is_what_one_process_drafts(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _draft(kit, _request(kit, "one-process"))  # no batches: judged here
    request = _request(kit, "fanned-out")
    counted = Counted(monkeypatch)

    evidence_batches.prepare_evidence(request)

    keys = _keys(kit, request)
    rows = _batches(request.job_id)
    assert len(rows) == -(-len(keys) // SIZE) > 2
    assert {row.status for row in rows} == {"succeeded"}
    assert sorted(counted.calls) == sorted(keys)  # each judged once, in some batch
    counted.calls.clear()
    fanned = _draft(kit, request)
    assert counted.calls == []  # the draft judged nothing itself
    assert fanned == whole
    assert fanned["summary"]["requirements"] > 0
    [progress] = batch_progress(Actor(TENANT, USER), kit.run.id)
    assert (progress.step, progress.done, progress.total) == (
        "run_evidence_analysis",
        len(rows),
        len(rows),
    )


def test_a_failed_batch_is_judged_again_alone(kit: Kit, monkeypatch: pytest.MonkeyPatch) -> None:
    request = _request(kit, "with-a-hiccup")
    keys = _keys(kit, request)
    counted = Counted(monkeypatch, poison=keys[SIZE + 1])  # in the second batch

    evidence_batches.prepare_evidence(request)

    assert [row.attempts for row in _batches(request.job_id)][:3] == [1, 2, 1]
    # The second batch's first key was judged before the hiccup, so twice; no other key.
    twice = {key for key in set(counted.calls) if counted.calls.count(key) > 1}
    assert twice == {keys[SIZE]}
    assert set(counted.calls) == set(keys)


def test_judgements_kept_from_other_inputs_are_judged_again(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _draft(kit, _request(kit, "one-process"))
    request = _request(kit, "stale-batch")
    evidence_batches.prepare_evidence(request)
    first = _batches(request.job_id)[0]
    path = kept_path(get_settings().resolved_storage_dir, request.job_id, first.items["ids"])
    body = json.loads(path.read_text())
    body["basis"][2] = -1  # as if the knowledge base had other chunks then
    path.write_text(json.dumps(body))
    counted = Counted(monkeypatch)

    fanned = _draft(kit, request)

    assert counted.calls == [tuple(json.loads(item)) for item in first.items["ids"]]
    assert fanned == whole


def test_a_batch_another_worker_judged_is_read_back_not_judged_again(
    kit: Kit, monkeypatch: pytest.MonkeyPatch
) -> None:
    request = _request(kit, "offered")
    keys = [json.dumps(list(key)) for key in _keys(kit, request)]
    planned = batches.plan(
        request.job_id, request.run_id, request.tenant_id, request.step.value, keys, SIZE
    )
    # Another analysis worker is offered the second batch and judges it first.
    body = {"request": request.model_dump(mode="json"), "batch_id": planned[1]}
    assert evidence_batches.judge_one_batch(body) == "succeeded"
    assert evidence_batches.judge_one_batch(body) == "taken"  # a second delivery: nothing
    counted = Counted(monkeypatch)

    evidence_batches.prepare_evidence(request)
    _draft(kit, request)

    second = {tuple(json.loads(key)) for key in keys[SIZE : 2 * SIZE]}
    assert not second & set(counted.calls)
    assert len(counted.calls) == len(keys) - len(second)
