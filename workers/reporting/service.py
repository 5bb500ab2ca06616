"""render_report: the run's latest artifacts as one HTML report (the artifact reviewers
approve) plus its exports (PDF, JSON, POA&M CSV/XLSX, OSCAL assessment plan, results and
POA&M), stored and versioned."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.artifact_registry import in_report
from orchestrator.contracts.jobs import ArtifactRef, JobRequest
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.compute_guard import write_transaction_holder
from orchestrator.db.models import Artifact, Assessment, Document
from orchestrator.db.roster_models import RosterPerson
from orchestrator.db.session import read_transaction
from orchestrator.db.storage import put_bytes
from orchestrator.jobs.artifacts import requested_version, save_artifact
from orchestrator.jobs.interface import JobContext, JobResult, PrepareAgain
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.service.risk_proposals import finding_risks
from workers.analysis.catalog import run_catalogs, run_scf_catalog
from workers.basis import Basis, basis_of
from workers.inputs import latest_artifact, require_artifact, source
from workers.reporting.control_texts import control_texts
from workers.reporting.exports import record_exports, render_exports, store_files
from workers.reporting.nist_objectives import plan_objectives
from workers.reporting.render import SECTIONS, ReportInput, render_report_html
from workers.reporting.signoff import sign_off
from workers.reporting.statement import statement
from workers.soa_content import soa_rows


@dataclass(frozen=True)
class Rendered:
    """The report and its exports, rendered and stored, from these input versions."""

    basis: Basis
    sources: list[dict[str, Any]]
    title: str
    html: bytes
    path: Path
    exports: list[dict[str, Any]]
    recorded: dict[str, Any]
    """What the report content records besides its files: the sign-off of its inputs and
    the assessor's statement (see `_recorded`)."""


def prepare_report(request: JobRequest) -> Rendered | None:
    """The job's `Prepare`: rendering (the PDF in several passes, the OSCAL exports) takes
    seconds to a minute, so it runs before the job's transaction, which then only records
    the artifact. Files are content-addressed: rendering twice stores nothing new."""
    storage = get_settings().resolved_storage_dir
    with read_transaction() as session:
        context = JobContext(request=request, session=session, storage_dir=storage)
        if _existing_report(context) is not None:
            return None
        basis = basis_of(session, request.run_id, request.assessment_id)
        inputs = _inputs(context)
        report, as_of = _report_input(context, inputs)
        sources = [source(a) for a in inputs.values()]
        recorded = _recorded(context, report)
    return _render(storage, report, as_of, sources, basis, recorded)


def render_report(context: JobContext) -> JobResult:
    existing = _existing_report(context)
    if existing is not None:
        # A re-delivered job: the first delivery's report and exports stand, unchanged.
        record_exports(context.session, existing.id, existing.content.get("exports", []))
        return _result(existing)
    inputs = _inputs(context)
    sources = [source(a) for a in inputs.values()]
    request = context.request
    basis = basis_of(context.session, request.run_id, request.assessment_id)
    rendered = context.prepared
    if not isinstance(rendered, Rendered) or rendered.basis != basis:
        if write_transaction_holder() is not None:
            # An input (or its sign-off) changed since it was rendered: render it again,
            # before the job's transaction, never inside it.
            raise PrepareAgain(prepare_report, "the report's inputs changed since rendering")
        # A caller outside the job runtime (tests, tools): render in its transaction.
        report, as_of = _report_input(context, inputs)
        recorded = _recorded(context, report)
        rendered = _render(context.storage_dir, report, as_of, sources, basis, recorded)
    content = {
        "title": rendered.title,
        "sections": [key for key, _ in SECTIONS],
        "format": "html",
        "path": str(rendered.path),
        "exports": rendered.exports,
        "sources": sources,
        **rendered.recorded,
    }
    ref = save_artifact(
        context,
        ArtifactKind.REPORT,
        content,
        file_bytes=rendered.html,
        file_suffix=".html",
        media_type="text/html",
    )
    stored = context.session.get(Artifact, ref.artifact_id)
    assert stored is not None
    record_exports(context.session, stored.id, stored.content.get("exports", []))
    return _result(stored)


def _render(
    storage_dir: Path,
    report: ReportInput,
    as_of: str,
    sources: list[dict[str, Any]],
    basis: Basis,
    recorded: dict[str, Any],
) -> Rendered:
    html_bytes = render_report_html(report).encode("utf-8")
    # Content-addressed, so this is the very file save_artifact stores.
    path, _ = put_bytes(storage_dir / "artifacts", html_bytes, ".html")
    exports = store_files(storage_dir / "artifacts", render_exports(report, as_of))
    return Rendered(basis, sources, report.title, html_bytes, path, exports, recorded)


def _recorded(context: JobContext, report: ReportInput) -> dict[str, Any]:
    """The sign-off (with the inputs nobody approved named), the assessor's statement row
    (amendable: row `assessor`) and what of it was carried from the previous draft."""
    previous = latest_artifact(context.session, context.request.run_id, ArtifactKind.REPORT)
    row, carried = statement(previous)
    unapproved = [
        f"{e['label']} v{e['version']}"
        for e in report.signoff
        if e.get("gated", True) and e.get("status") != "approved"
    ]
    recorded: dict[str, Any] = {
        "signoff": report.signoff,
        "unapproved_inputs": unapproved,
        "statement": [row],
    }
    if carried is not None:
        recorded["carried_forward"] = carried
    return recorded


def _existing_report(context: JobContext) -> Artifact | None:
    version = requested_version(context, ArtifactKind.REPORT)
    return context.session.scalar(
        select(Artifact).where(
            Artifact.run_id == context.request.run_id,
            Artifact.kind == ArtifactKind.REPORT.value,
            Artifact.version == version,
        )
    )


def report_input(context: JobContext) -> tuple[ReportInput, str]:
    """What the report of the context's run is rendered from, and its as-of time."""
    return _report_input(context, _inputs(context))


def _inputs(context: JobContext) -> dict[str, Artifact]:
    """The report's inputs (declared `report=`): the required ones, then those the run has."""
    inputs = {
        d.kind: require_artifact(context, ArtifactKind(d.kind))
        for d in in_report()
        if d.report == "required"
    }
    for d in in_report():
        if d.report == "optional":
            artifact = latest_artifact(
                context.session, context.request.run_id, ArtifactKind(d.kind)
            )
            if artifact is not None:
                inputs[d.kind] = artifact
    return inputs


def _report_input(context: JobContext, inputs: dict[str, Artifact]) -> tuple[ReportInput, str]:
    request = context.request
    settings = get_settings()
    assessment = context.session.get(Assessment, request.assessment_id)
    name = assessment.name if assessment else str(request.assessment_id)
    # "As of" the newest input, not "now": the same inputs render the same bytes.
    newest = max(_utc(a.created_at) for a in inputs.values())
    report = ReportInput(
        title=f"SCF assessment report: {name}",
        assessment_name=name,
        as_of=newest.strftime("%Y-%m-%d %H:%M UTC"),
        soa=inputs[ArtifactKind.SOA].content,
        gaps=inputs[ArtifactKind.GAP_ANALYSIS].content,
        maturity=inputs[ArtifactKind.MATURITY_ASSESSMENT].content,
        poam=inputs[ArtifactKind.POAM].content,
        scope=_content(inputs, ArtifactKind.SCOPE),
        evidence=_content(inputs, ArtifactKind.EVIDENCE_ANALYSIS),
        signoff=sign_off(context.session, inputs),
        statement=statement(latest_artifact(context.session, request.run_id, ArtifactKind.REPORT))[
            0
        ],
        assessment_id=str(request.assessment_id),
        documents=_documents(context),
        ssp_href=settings.oscal_ssp_href,
        system_id=settings.oscal_system_id,
        risks=finding_risks(context.session, request.assessment_id),
        controls=control_texts(
            run_scf_catalog(context),
            (c for row in soa_rows(inputs[ArtifactKind.SOA].content) for c in _in_scope(row)),
        ),
        objectives=plan_objectives(
            run_catalogs(context), inputs[ArtifactKind.GAP_ANALYSIS].content
        ),
        roster=_roster(context),
        assessor={
            "name": settings.oscal_assessor_name.strip(),
            "iso17020_id": settings.oscal_assessor_iso17020_id.strip(),
            "address": settings.oscal_assessor_address.strip(),
        },
    )
    return report, newest.strftime("%Y-%m-%dT%H:%M:%SZ")


def _in_scope(row: dict[str, Any]) -> list[str]:
    """The SCF controls of an applicable SoA row that were not excluded."""
    if row.get("applicable") is False:
        return []
    excluded = set(row.get("excluded_controls") or [])
    return [str(c) for c in row.get("scf_controls") or [] if c not in excluded]


def _roster(context: JobContext) -> list[dict[str, Any]]:
    """The assessment's roster as the report is drafted: FedRAMP's plan roles are filled
    from it."""
    people = context.session.scalars(
        select(RosterPerson)
        .where(RosterPerson.assessment_id == context.request.assessment_id)
        .order_by(RosterPerson.added_at, RosterPerson.id)
    )
    return [
        {
            "name": p.name,
            "email": p.email,
            "principal": p.principal,
            "telephone": p.telephone,
            "roles": list(p.roles),
        }
        for p in people
    ]


def _documents(context: JobContext) -> list[dict[str, Any]]:
    """The documents people uploaded (not the SoA the system indexes): the OSCAL
    assessment plan's subjects."""
    documents = context.session.scalars(
        select(Document)
        .where(
            Document.assessment_id == context.request.assessment_id,
            Document.uploaded_by != SYSTEM_UPLOADER,
        )
        .order_by(Document.filename, Document.sha256)
    )
    return [
        {
            "id": str(d.id),
            "filename": d.filename,
            "media_type": d.media_type,
            "sha256": d.sha256,
            "status": d.status,
        }
        for d in documents
    ]


def _result(artifact: Artifact) -> JobResult:
    ref = ArtifactRef(
        artifact_id=artifact.id,
        kind=ArtifactKind.REPORT,
        version=artifact.version,
        sha256=artifact.sha256,
    )
    exports = artifact.content.get("exports", [])
    return JobResult(
        summary={
            "path": artifact.storage_path or artifact.content.get("path"),
            "bytes": _size(artifact),
            "sections": len(SECTIONS),
            "exports": {entry["kind"]: entry["bytes"] for entry in exports},
            "artifact_kind": ArtifactKind.REPORT.value,
            "artifact_version": artifact.version,
        },
        artifact=ref,
    )


def _size(artifact: Artifact) -> int | None:
    path = Path(artifact.storage_path) if artifact.storage_path else None
    return path.stat().st_size if path is not None and path.exists() else None


def _utc(moment: datetime) -> datetime:
    # SQLite hands timestamps back naive; they were written in UTC.
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _content(inputs: dict[str, Artifact], kind: ArtifactKind) -> dict[str, object]:
    artifact = inputs.get(kind)
    return artifact.content if artifact is not None else {}
