"""render_report: the run's latest artifacts as one HTML report, stored and versioned."""

from __future__ import annotations

from datetime import UTC, datetime

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact, Assessment
from orchestrator.jobs.artifacts import save_artifact
from orchestrator.jobs.interface import JobContext, JobResult
from orchestrator.storage import put_bytes
from workers.inputs import latest_artifact, require_artifact, source
from workers.reporting.render import SECTIONS, ReportInput, render_report_html

REQUIRED = (ArtifactKind.SOA, ArtifactKind.GAP_ANALYSIS, ArtifactKind.MATURITY_ASSESSMENT,
            ArtifactKind.POAM)
OPTIONAL = (ArtifactKind.SCOPE, ArtifactKind.EVIDENCE_ANALYSIS)


def render_report(context: JobContext) -> JobResult:
    request, session = context.request, context.session
    inputs: dict[ArtifactKind, Artifact] = {kind: require_artifact(context, kind)
                                            for kind in REQUIRED}
    for kind in OPTIONAL:
        artifact = latest_artifact(session, request.run_id, kind)
        if artifact is not None:
            inputs[kind] = artifact
    assessment = session.get(Assessment, request.assessment_id)
    name = assessment.name if assessment else str(request.assessment_id)
    title = f"SCF assessment report: {name}"
    # "As of" the newest input, not "now": the same inputs render the same bytes.
    as_of = max(_utc(a.created_at) for a in inputs.values()).strftime("%Y-%m-%d %H:%M UTC")
    html_bytes = render_report_html(ReportInput(
        title=title, assessment_name=name, as_of=as_of,
        soa=inputs[ArtifactKind.SOA].content, gaps=inputs[ArtifactKind.GAP_ANALYSIS].content,
        maturity=inputs[ArtifactKind.MATURITY_ASSESSMENT].content,
        poam=inputs[ArtifactKind.POAM].content,
        scope=_content(inputs, ArtifactKind.SCOPE),
        evidence=_content(inputs, ArtifactKind.EVIDENCE_ANALYSIS))).encode("utf-8")
    # Content-addressed, so this is the very file save_artifact stores (and finds again).
    path, _ = put_bytes(context.storage_dir / "artifacts", html_bytes, ".html")
    content = {"title": title, "sections": [key for key, _ in SECTIONS], "format": "html",
               "path": str(path), "sources": [source(a) for a in inputs.values()]}
    ref = save_artifact(context, ArtifactKind.REPORT, content, file_bytes=html_bytes,
                        file_suffix=".html", media_type="text/html")
    stored = session.get(Artifact, ref.artifact_id)
    # A re-delivered job gets the first delivery's artifact: report where that one is.
    stored_path = stored.storage_path if stored and stored.storage_path else str(path)
    return JobResult(summary={"path": stored_path, "bytes": len(html_bytes),
                              "sections": len(SECTIONS), "artifact_kind": ArtifactKind.REPORT.value,
                              "artifact_version": ref.version}, artifact=ref)


def _utc(moment: datetime) -> datetime:
    # SQLite hands timestamps back naive; they were written in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _content(inputs: dict[ArtifactKind, Artifact], kind: ArtifactKind) -> dict[str, object]:
    artifact = inputs.get(kind)
    return artifact.content if artifact is not None else {}
