"""The lifecycle's shape: what each step is, what completes it, which gates guard it."""

from __future__ import annotations

from dataclasses import dataclass

from orchestrator.contracts.artifact_registry import ARTIFACTS
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.signals import ArtifactKind, SignalType
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step


@dataclass(frozen=True)
class StepSpec:
    step: Step
    kind: StepKind
    job_kind: JobKind | None = None
    completion_signal: SignalType | None = None
    """For job steps: the signal that reports success."""
    produces: ArtifactKind | None = None
    """For job steps: the draft artifact the job creates."""
    awaits: SignalType | None = None
    """For wait steps: the signal that ends the wait."""
    requires_approved: tuple[ArtifactKind, ...] = ()
    """The Assessment Engine's gates: artifacts whose current version must be approved."""


def _job(
    step: Step,
    kind: JobKind,
    produces: ArtifactKind | None = None,
    completion: SignalType = SignalType.JOB_COMPLETED,
    requires: tuple[ArtifactKind, ...] = (),
) -> StepSpec:
    return StepSpec(
        step,
        StepKind.JOB,
        job_kind=kind,
        completion_signal=completion,
        produces=produces,
        requires_approved=requires,
    )


def _approval(step: Step, signal: SignalType, requires: tuple[ArtifactKind, ...] = ()) -> StepSpec:
    return StepSpec(step, StepKind.WAIT_FOR_APPROVAL, awaits=signal, requires_approved=requires)


_A = ArtifactKind
_SPECS = (
    StepSpec(Step.VALIDATE_ASSESSMENT, StepKind.INLINE),
    StepSpec(
        Step.WAIT_FOR_DOCUMENTS, StepKind.WAIT_FOR_INPUT, awaits=SignalType.DOCUMENTS_UPLOADED
    ),
    _job(Step.INGEST_DOCUMENTS, JobKind.INGEST_DOCUMENTS, completion=SignalType.DOCUMENTS_INGESTED),
    _job(Step.INDEX_KB, JobKind.INDEX_KB, completion=SignalType.KB_INDEXED),
    _job(
        Step.RUN_SCF_PRE_ANALYSIS,
        JobKind.ANALYSIS,
        _A.SCF_PRE_ANALYSIS,
        completion=SignalType.SCF_PRE_ANALYSIS_COMPLETED,
    ),
    StepSpec(
        Step.WAIT_FOR_FRAMEWORK_SELECTION,
        StepKind.WAIT_FOR_INPUT,
        awaits=SignalType.FRAMEWORK_SELECTED,
    ),
    _job(Step.CREATE_SCOPE, JobKind.ANALYSIS, _A.SCOPE),
    _job(Step.CREATE_SOA_DRAFT, JobKind.ANALYSIS, _A.SOA),
    _approval(Step.WAIT_FOR_SOA_APPROVAL, SignalType.SOA_APPROVED),
    # Gate: SoA before evidence analysis and gap analysis.
    _job(Step.INGEST_SOA, JobKind.INGEST_SOA, requires=(_A.SOA,)),
    _job(Step.RUN_EVIDENCE_ANALYSIS, JobKind.ANALYSIS, _A.EVIDENCE_ANALYSIS, requires=(_A.SOA,)),
    _job(Step.CREATE_GAP_ANALYSIS, JobKind.ANALYSIS, _A.GAP_ANALYSIS, requires=(_A.SOA,)),
    _approval(Step.WAIT_FOR_GAP_APPROVAL, SignalType.GAP_ANALYSIS_APPROVED),
    # Gate: gap analysis before maturity.
    _job(
        Step.CREATE_MATURITY_ASSESSMENT,
        JobKind.ANALYSIS,
        _A.MATURITY_ASSESSMENT,
        requires=(_A.SOA, _A.GAP_ANALYSIS),
    ),
    _approval(Step.WAIT_FOR_MATURITY_APPROVAL, SignalType.MATURITY_APPROVED),
    # Gate: maturity before POA&M.
    _job(
        Step.CREATE_POAM,
        JobKind.ANALYSIS,
        _A.POAM,
        requires=(_A.SOA, _A.GAP_ANALYSIS, _A.MATURITY_ASSESSMENT),
    ),
    _approval(Step.WAIT_FOR_POAM_APPROVAL, SignalType.POAM_APPROVED),
    # Gate: POA&M before the final report.
    _job(
        Step.CREATE_REPORT,
        JobKind.RENDER_REPORT,
        _A.REPORT,
        requires=(_A.SOA, _A.GAP_ANALYSIS, _A.MATURITY_ASSESSMENT, _A.POAM),
    ),
    _approval(Step.WAIT_FOR_REPORT_APPROVAL, SignalType.REPORT_APPROVED),
    # Gate: report before closed.
    StepSpec(
        Step.CLOSE_ASSESSMENT,
        StepKind.INLINE,
        requires_approved=(_A.SOA, _A.GAP_ANALYSIS, _A.MATURITY_ASSESSMENT, _A.POAM, _A.REPORT),
    ),
)

STEP_SPECS: dict[Step, StepSpec] = {spec.step: spec for spec in _SPECS}
assert tuple(STEP_SPECS) == STEP_ORDER, "step specs must follow the spec's order"

#: The approval wait step for each artifact kind that has one (declared in
#: orchestrator.contracts.artifact_registry).
APPROVAL_WAIT_FOR: dict[ArtifactKind, Step] = {
    ArtifactKind(d.kind): Step(d.approved_at) for d in ARTIFACTS if d.approved_at
}

#: Kinds approved with no wait of their own (the scope): any time until the report's gate
#: (`SCOPE_APPROVAL_DEADLINE`).
APPROVED_ANY_TIME: frozenset[ArtifactKind] = frozenset(
    ArtifactKind(d.kind) for d in ARTIFACTS if d.approved_any_time
)

#: The kinds people approve, in the order the lifecycle drafts them.
APPROVED_KINDS: tuple[ArtifactKind, ...] = tuple(
    ArtifactKind(d.kind) for d in ARTIFACTS if d.approved_by
)

#: The artifact kind each approval wait step approves.
APPROVED_AT: dict[Step, ArtifactKind] = {step: kind for kind, step in APPROVAL_WAIT_FOR.items()}

#: The step that drafts each artifact kind.
PRODUCER_OF: dict[ArtifactKind, Step] = {
    spec.produces: spec.step for spec in _SPECS if spec.produces is not None
}

#: Scope has no wait of its own: it may be approved until the report gate opens (the
#: report's sign-off names it, and the report gate refuses while it is unapproved).
SCOPE_APPROVAL_DEADLINE = Step.WAIT_FOR_REPORT_APPROVAL

#: Upper bound on steps entered by one decision (every step at most once).
MAX_TRANSITIONS_PER_DECISION = len(STEP_ORDER)
