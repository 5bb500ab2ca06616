"""Evidence analysis fanned out: the judgements its draft needs (each applicable control,
each applicable requirement's linked controls), in batches of
LIFECYCLE_JOB_BATCH_REQUIREMENTS that any analysis worker may compute
(orchestrator.jobs.batches). The job's `Prepare` plans and offers them, takes them too, and
the draft then reads them back (`judged_ahead`) and judges itself only what no batch kept
from the same inputs. The draft's content is the same however many workers took part."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.session import read_transaction
from orchestrator.engine.routing import ROUTES
from orchestrator.jobs import batches
from orchestrator.jobs.interface import JobContext
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.drafting import prepares
from workers.analysis.evidence import judgement_keys, judgement_of
from workers.analysis.judged_ahead import Key, keep, kept_path
from workers.analysis.requirement_evidence import prepare_retrieval
from workers.analysis.shared_judge import judge_for
from workers.basis import basis_of
from workers.inputs import require_artifact

JUDGE_BATCH_TASK = "analysis.judge_batch"


@prepares("evidence_analysis")
def prepare_evidence(request: JobRequest) -> None:
    """The evidence analysis's `Prepare`: vectors ahead, then its judgements in batches."""
    prepare_retrieval(request)
    settings = get_settings()
    storage = settings.resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        soa = require_artifact(context, ArtifactKind.SOA).content
        scope = require_artifact(context, ArtifactKind.SCOPE).content
    keys = [json.dumps(list(key)) for key in judgement_keys(soa, scope)]
    if not keys:
        return
    offer = (
        JUDGE_BATCH_TASK,
        ROUTES[JobKind.ANALYSIS].queue,
        {"request": request.model_dump(mode="json")},
    )
    batches.fan_out(request, keys, settings.job_batch_requirements, offer, judging_work(request))


def judging_work(request: JobRequest) -> batches.Work:
    def work(items: list[str]) -> Callable[[Session], None]:
        storage = get_settings().resolved_storage_dir
        with read_transaction() as session:
            context = JobContext(request=request, session=session, storage_dir=storage)
            basis = basis_of(session, request.run_id, request.assessment_id)
            judge = judge_for(context, run_scf_catalog(context), basis)
            judged = {_key(item): judgement_of(judge, _key(item)) for item in items}
        keep(kept_path(storage, request.job_id, items), basis, judged)
        return lambda session: None  # the judgements are in storage; the mark is the batch's

    return work


def _key(item: str) -> Key:
    return tuple(str(c) for c in json.loads(item))


def judge_one_batch(body: dict[str, Any]) -> str:
    """An analysis worker's share: judge one batch if nobody holds it."""
    claimed = batches.claim(str(body["batch_id"]))
    if claimed is None:
        return "taken"
    request = JobRequest.model_validate(body["request"])
    ok = batches.run_claimed(claimed, judging_work(request))
    return "succeeded" if ok else "failed"
