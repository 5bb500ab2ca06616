"""Jobs that fan out, on real worker processes: a whole lifecycle with two workers of every
job queue and small batches. Each batch the job offered reaches a worker of its queue (the
batch tasks are registered where their queue is consumed), is done once, and the run
completes with each step once."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.catalog.registry import shipped_catalog
from orchestrator.contracts.steps import STEP_ORDER
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.fleet_runs import new_tenant, start_assessment, step_counts
from tests.support.polling import scaled, wait_for
from workers.analysis.requirement_query import control_texts

pytestmark = pytest.mark.integration
SMALL_BATCHES = {
    "LIFECYCLE_JOB_BATCH_DOCUMENTS": "1",
    "LIFECYCLE_JOB_BATCH_ITEMS": "4",
    "LIFECYCLE_JOB_BATCH_REQUIREMENTS": "16",
}
BATCH_TASKS = {
    "ingestion.parse_batch",
    "kb_index.embed_batch",
    "analysis.judge_batch",
    "analysis.embed_catalog_batch",
}


def _batch_task_outcomes(fleet: Fleet, names: list[str]) -> dict[str, list[str]]:
    """Each batch task's returns, by task id, from the workers' JSON log lines."""
    found: dict[str, list[str]] = {}
    for name in names:
        for line in fleet.log_of(name).splitlines():
            if not line.startswith("{"):
                continue
            record: dict[str, Any] = json.loads(line)
            data = record.get("data") or {}
            if record.get("logger") == "celery.app.trace" and data.get("name") in BATCH_TASKS:
                found.setdefault(str(data["id"]), []).append(str(data.get("return_value")))
    return found


@pytest.mark.broker_matrix
def test_every_offered_batch_reaches_a_worker_and_is_done_once(fleet: Fleet) -> None:
    fleet.start("orchestrator", concurrency=2)
    workers = [
        fleet.start(
            "ingestion,kb_index,analysis,reporting",
            pool="solo",
            concurrency=1,
            extra_env=SMALL_BATCHES,
        )
        for _ in range(2)
    ]
    owner, reviewer = new_tenant()
    run = start_assessment(owner, documents=3)

    final = drive(ScriptedReviewer(reviewer), run.id, timeout_s=scaled(180))

    assert final.status == "completed", final
    assert step_counts(run.id) == {(step.value, "completed"): 1 for step in STEP_ORDER}
    with transaction() as session:
        rows = list(session.scalars(select(JobBatch).where(JobBatch.run_id == run.id)))
    # The first analysis job found the catalogue's vectors missing (fresh storage) and
    # offered its controls in batches of their own: each control in exactly one.
    catalogue = [row for row in rows if row.job_id.endswith(":catalog")]
    rows = [row for row in rows if not row.job_id.endswith(":catalog")]
    assert len(catalogue) >= 8 and len({row.job_id for row in catalogue}) == 1
    # Every text of every control, each once ("GOV-01#2": GOV-01's third text).
    catalog = shipped_catalog()
    embedded = [item for row in catalogue for item in row.items["ids"]]
    assert len(embedded) == len(set(embedded))
    assert {item.partition("#")[0] for item in embedded} == {c.id for c in catalog.controls}
    assert len(embedded) == sum(len(control_texts(catalog, c)) for c in catalog.controls)
    assert {(row.status, row.attempts) for row in catalogue} == {("succeeded", 1)}
    per_step = Counter(row.step for row in rows)
    assert per_step["ingest_documents"] == 3  # one batch per document
    assert per_step["index_kb"] >= 2 and per_step["run_evidence_analysis"] >= 2, per_step
    assert {(row.status, row.attempts) for row in rows} == {("succeeded", 1)}
    # The job's process keeps the first batch of each job; every other one was offered to
    # the queue, and a worker of it ran its task: it did the batch, or found it done.
    offered = {row.id for row in rows + catalogue if row.seq > 0}
    wait_for(
        lambda: set(_batch_task_outcomes(fleet, workers)) >= offered,
        what="every offered batch's task to run",
    )
    outcomes = _batch_task_outcomes(fleet, workers)
    assert set(outcomes) == offered
    assert {r for returns in outcomes.values() for r in returns} <= {"'succeeded'", "'taken'"}
    assert all(returns.count("'succeeded'") <= 1 for returns in outcomes.values()), outcomes
