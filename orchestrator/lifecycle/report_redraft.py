"""The report drafted again while it waits for approval: after a reviewer amends its
assessor statement (the new draft renders it) or after an input it names as unapproved
is approved (the new draft's sign-off says so). The rendered report is what people sign,
so it never shows a statement or a sign-off older than the run's."""

from __future__ import annotations

from orchestrator.contracts.audit import SYSTEM_ACTOR
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.effects import ArtifactStatusChanged, Effect, StepsSuperseded
from orchestrator.lifecycle.state import RunState
from orchestrator.lifecycle.transitions import enter

REPORT = ArtifactKind.REPORT


def at_report_gate(state: RunState) -> bool:
    return REPORT in state.artifacts and state.step is Step.WAIT_FOR_REPORT_APPROVAL


def redraft_report(state: RunState, effects: list[Effect], requested_by: str | None) -> RunState:
    """Supersede the current report version and queue a new rendering of it. The new draft
    counts as asked for by `requested_by` (an amender may not then approve it)."""
    current = state.artifacts.get(REPORT)
    if current is not None:
        effects.append(ArtifactStatusChanged(REPORT, current, "superseded"))
    if state.step is Step.WAIT_FOR_REPORT_APPROVAL:
        # The wait for this version ends without its approval: a new attempt follows.
        effects.append(StepsSuperseded((Step.WAIT_FOR_REPORT_APPROVAL,)))
    state = state.without_entry("collected", REPORT).without_entry("rejected", REPORT)
    return enter(state, Step.CREATE_REPORT, effects, requested_by or SYSTEM_ACTOR)
