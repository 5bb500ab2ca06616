"""The analysis queue's one entry point: draft the job's step ahead, then record it.

Drafting (retrieval, scoring, judging) runs in the job's `Prepare`, in a read
transaction that takes no lock; the job's transaction saves the draft if the inputs are
still the ones it was drafted from (`workers.basis`), and otherwise drafts it again first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.compute_guard import computing, write_transaction_holder
from orchestrator.db.session import read_transaction
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult, Prepare, PrepareAgain
from workers.analysis.evidence import run_evidence_analysis
from workers.analysis.gaps import create_gap_analysis
from workers.analysis.maturity import create_maturity_assessment
from workers.analysis.output import publish
from workers.analysis.poam import create_poam
from workers.analysis.pre_analysis import run_scf_pre_analysis
from workers.analysis.requirement_evidence import prepare_retrieval
from workers.analysis.scope import create_scope
from workers.analysis.soa import create_soa_draft
from workers.basis import Basis, basis_of

Draft = Callable[[JobContext], dict[str, Any]]

STEP_DRAFTS: dict[Step, tuple[ArtifactKind, Draft]] = {
    Step.RUN_SCF_PRE_ANALYSIS: (ArtifactKind.SCF_PRE_ANALYSIS, run_scf_pre_analysis),
    Step.CREATE_SCOPE: (ArtifactKind.SCOPE, create_scope),
    Step.CREATE_SOA_DRAFT: (ArtifactKind.SOA, create_soa_draft),
    Step.RUN_EVIDENCE_ANALYSIS: (ArtifactKind.EVIDENCE_ANALYSIS, run_evidence_analysis),
    Step.CREATE_GAP_ANALYSIS: (ArtifactKind.GAP_ANALYSIS, create_gap_analysis),
    Step.CREATE_MATURITY_ASSESSMENT: (
        ArtifactKind.MATURITY_ASSESSMENT,
        create_maturity_assessment,
    ),
    Step.CREATE_POAM: (ArtifactKind.POAM, create_poam),
}


#: Steps that search the knowledge base with the catalogue's vectors: both computed ahead.
STEP_PREPARES: dict[Step, Prepare] = {
    Step.CREATE_SOA_DRAFT: prepare_retrieval,
    Step.RUN_EVIDENCE_ANALYSIS: prepare_retrieval,
}


@dataclass(frozen=True)
class Drafted:
    basis: Basis
    content: dict[str, Any]


def _draft_for(step: Step) -> tuple[ArtifactKind, Draft]:
    found = STEP_DRAFTS.get(step)
    if found is None:
        raise JobFailure("unknown_step", f"the analysis queue has no service for {step.value}")
    return found


def draft(context: JobContext) -> dict[str, Any]:
    """The step's draft content: the heavy part, refused inside a job's write transaction."""
    _, drafting = _draft_for(context.request.step)
    computing(f"drafting {context.request.step.value}")
    return drafting(context)


def prepare_analysis_step(request: JobRequest) -> Drafted:
    """The job's `Prepare`: what retrieval needs (vectors), then the draft itself, read
    from one snapshot together with the basis it is checked against."""
    _draft_for(request.step)
    prepare = STEP_PREPARES.get(request.step)
    if prepare is not None:
        prepare(request)
    storage = get_settings().resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        basis = basis_of(session, request.run_id, request.assessment_id)
        return Drafted(basis, draft(context))


def run_analysis_step(context: JobContext) -> JobResult:
    kind, _ = _draft_for(context.request.step)
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
    return publish(context, kind, content)
