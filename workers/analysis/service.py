"""The analysis queue's one entry point: draft the job's step ahead, then record it.

Drafting (retrieval, scoring, judging) runs in the job's `Prepare`, in a read
transaction that takes no lock; the job's transaction saves the draft if the inputs are
still the ones it was drafted from (`workers.basis`), and otherwise drafts it again first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.contracts.artifact_registry import drafted_at
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.registry import RegistrationError
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.compute_guard import computing, write_transaction_holder
from orchestrator.db.session import read_transaction
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult, Prepare, PrepareAgain
from workers.analysis.drafting import DRAFTS, PREPARES, RECORDS, Draft
from workers.analysis.output import publish
from workers.basis import Basis, basis_of


def drafting_of(step: str) -> tuple[str, Draft, Prepare | None]:
    """The artifact kind the step drafts (its declaration), its drafting function and what
    it computes ahead (registered in workers.analysis.drafting)."""
    found = drafted_at(step)
    if found is None:
        raise JobFailure("unknown_step", f"the analysis queue has no service for {step}")
    try:
        drafting = DRAFTS[found.kind]
    except RegistrationError as missing:
        raise JobFailure("unknown_step", f"{step}: {missing}") from missing
    return found.kind, drafting, PREPARES.get(found.kind)


@dataclass(frozen=True)
class Drafted:
    basis: Basis
    content: dict[str, Any]


def draft(context: JobContext) -> dict[str, Any]:
    """The step's draft content: the heavy part, refused inside a job's write transaction."""
    _, drafting, _ = drafting_of(context.request.step)
    computing(f"drafting {context.request.step.value}")
    return drafting(context)


def prepare_analysis_step(request: JobRequest) -> Drafted:
    """The job's `Prepare`: what retrieval needs (vectors), then the draft itself, read
    from one snapshot together with the basis it is checked against."""
    _, _, prepare = drafting_of(request.step)
    if prepare is not None:
        prepare(request)
    storage = get_settings().resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        basis = basis_of(session, request.run_id, request.assessment_id)
        return Drafted(basis, draft(context))


def run_analysis_step(context: JobContext) -> JobResult:
    kind, _, _ = drafting_of(context.request.step)
    request = context.request
    prepared = context.prepared
    if isinstance(prepared, Drafted) and prepared.basis == basis_of(
        context.session, request.run_id, request.assessment_id
    ):
        content = prepared.content
    elif write_transaction_holder() is not None:
        raise PrepareAgain(prepare_analysis_step, "the draft's inputs changed or were not read")
    else:  # a caller outside the job runtime (tests, tools): draft in its transaction
        content = draft(context)
    result = publish(context, ArtifactKind(kind), content)
    record = RECORDS.get(kind)
    if record is not None and result.artifact is not None:
        record(context, content, result.artifact.version)
    return result
