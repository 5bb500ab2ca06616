"""Controlled reprocessing: rewind a run to a step, superseding what came after it."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from orchestrator.contracts.artifact_registry import versioned
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.lifecycle.state import RunState


@dataclass(frozen=True)
class RewindPlan:
    """What reprocessing `target` supersedes; what a dry run prints."""

    target: Step
    superseded_steps: tuple[Step, ...]
    superseded_artifacts: tuple[tuple[ArtifactKind, int], ...]
    approvals_to_collect_again: tuple[ArtifactKind, ...]
    new_versions: tuple[ArtifactKind, ...]

    def to_json(self) -> dict[str, object]:
        return {
            "target": self.target.value,
            "superseded_steps": [s.value for s in self.superseded_steps],
            "superseded_artifacts": [
                {"kind": k.value, "version": v} for k, v in self.superseded_artifacts
            ],
            "approvals_to_collect_again": [k.value for k in self.approvals_to_collect_again],
            "new_versions": [k.value for k in self.new_versions],
        }


def rewind_problem(state: RunState, target: Step, new_version: bool) -> str | None:
    """Why `target` cannot be reprocessed now, or None."""
    unavailable = definitions.unavailable(state)
    if unavailable is not None:
        return unavailable
    if not definitions.of(state).has(target):
        return f"{target.value} is not a step of the run's definition"
    if STEP_SPECS[target].kind is not StepKind.JOB:
        return f"{target.value} is not a job step; only job steps can be reprocessed"
    if state.step is None or target.order > state.step.order:
        return f"the run has not reached {target.value} yet"
    produced = _kinds_from(target)
    # Drafts people approve are never drafted again without the explicit flag.
    needing_flag = sorted(k.value for k in produced if k in state.artifacts and k in versioned())
    if needing_flag and not new_version:
        return (
            f"reprocessing {target.value} drafts new versions of {', '.join(needing_flag)}; "
            "it needs the explicit new-version flag"
        )
    return None


def rewind_plan(state: RunState, target: Step) -> RewindPlan:
    current = state.step.order if state.step is not None else -1
    steps = tuple(s for s in STEP_ORDER[target.order : current + 1] if state.attempt(s) > 0)
    produced = _kinds_from(target)
    artifacts = tuple((k, v) for k, v in state.artifacts.items() if k in produced)
    approvals = tuple(k for k in state.approved if k in produced)
    target_kind = STEP_SPECS[target].produces
    downstream = tuple(k for k, _ in artifacts)
    new_versions = (
        downstream
        if target_kind is None
        else (target_kind, *[k for k in downstream if k is not target_kind])
    )
    return RewindPlan(target, steps, artifacts, approvals, new_versions)


def forget_downstream(state: RunState, plan: RewindPlan) -> RunState:
    """Approvals and collected signoffs of superseded drafts no longer count."""
    kinds = {kind for kind, _ in plan.superseded_artifacts}
    return state.evolve(
        approved=MappingProxyType({k: v for k, v in state.approved.items() if k not in kinds}),
        collected=MappingProxyType({k: v for k, v in state.collected.items() if k not in kinds}),
        rejected=MappingProxyType({k: v for k, v in state.rejected.items() if k not in kinds}),
        active_job_id=None,
        blocked_from=None,
        reason=None,
    )


def _kinds_from(target: Step) -> frozenset[ArtifactKind]:
    return frozenset(
        spec.produces
        for spec in STEP_SPECS.values()
        if spec.produces is not None and spec.step.order >= target.order
    )
