"""Instant job bodies: measure the orchestration, not the work (benchmarks, race tests).

A worker started with `--include orchestrator.testing.instant_worker` runs every job this
way; importing this module alone changes nothing.
"""

from __future__ import annotations

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.artifacts import save_artifact
from orchestrator.jobs.interface import JobContext, JobResult


def instant_service(context: JobContext) -> JobResult:
    kind = context.request.parameters.get("artifact_kind")
    if kind is None:
        return JobResult(summary={"instant": True})
    artifact = save_artifact(context, ArtifactKind(kind), {"instant": True})
    return JobResult(summary={"instant": True}, artifact=artifact)
