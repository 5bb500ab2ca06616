"""Saving a step's draft artifact and reporting it back in the same shape."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.artifacts import save_artifact
from orchestrator.jobs.interface import JobContext, JobResult


def publish(context: JobContext, kind: ArtifactKind, content: dict[str, Any]) -> JobResult:
    """Save the draft (idempotent per run, kind and version) and summarise it.

    The job summary is the artifact's own small `summary` block plus its version.
    """
    ref = save_artifact(context, kind, content)
    summary = {
        **content.get("summary", {}),
        "artifact_kind": kind.value,
        "artifact_version": ref.version,
    }
    return JobResult(summary=summary, artifact=ref)
