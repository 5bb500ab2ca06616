"""The analysis queue's one entry point: run the drafting service for the job's step."""

from __future__ import annotations

from orchestrator.contracts.jobs import JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult, JobService, Prepare
from workers.analysis.evidence import run_evidence_analysis
from workers.analysis.gaps import create_gap_analysis
from workers.analysis.maturity import create_maturity_assessment
from workers.analysis.poam import create_poam
from workers.analysis.pre_analysis import run_scf_pre_analysis
from workers.analysis.requirement_evidence import prepare_retrieval
from workers.analysis.scope import create_scope
from workers.analysis.soa import create_soa_draft

STEP_SERVICES: dict[Step, JobService] = {
    Step.RUN_SCF_PRE_ANALYSIS: run_scf_pre_analysis,
    Step.CREATE_SCOPE: create_scope,
    Step.CREATE_SOA_DRAFT: create_soa_draft,
    Step.RUN_EVIDENCE_ANALYSIS: run_evidence_analysis,
    Step.CREATE_GAP_ANALYSIS: create_gap_analysis,
    Step.CREATE_MATURITY_ASSESSMENT: create_maturity_assessment,
    Step.CREATE_POAM: create_poam,
}


#: Steps that search the knowledge base with the catalogue's vectors: both computed ahead.
STEP_PREPARES: dict[Step, Prepare] = {
    Step.CREATE_SOA_DRAFT: prepare_retrieval,
    Step.RUN_EVIDENCE_ANALYSIS: prepare_retrieval,
}


def prepare_analysis_step(request: JobRequest) -> None:
    prepare = STEP_PREPARES.get(request.step)
    if prepare is not None:
        prepare(request)


def run_analysis_step(context: JobContext) -> JobResult:
    service = STEP_SERVICES.get(context.request.step)
    if service is None:
        raise JobFailure(
            "unknown_step", f"the analysis queue has no service for {context.request.step.value}"
        )
    return service(context)
