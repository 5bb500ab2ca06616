"""Report exports: rendered from the same inputs as the HTML, stored content-addressed,
recorded once per (report artifact, kind)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.db.compute_guard import computing
from orchestrator.db.report_models import ReportExport
from orchestrator.db.storage import content_path, put_bytes, sha256_hex
from workers.reporting.docx_export import DOCX, render_report_docx
from workers.reporting.findings_export import render_findings_csv, render_findings_xlsx
from workers.reporting.oscal_export import (
    PlanLink,
    render_oscal_assessment_plan,
    render_oscal_assessment_results,
    render_oscal_poam,
)
from workers.reporting.pdf import render_report_pdf
from workers.reporting.poam_export import render_poam_closed_csv, render_poam_csv, render_poam_xlsx
from workers.reporting.render import ReportInput
from workers.reporting.report_json import render_report_json
from workers.reporting.soa_export import render_soa_csv, render_soa_xlsx

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@dataclass(frozen=True)
class ExportFile:
    kind: str
    media_type: str
    suffix: str
    data: bytes


def render_exports(report: ReportInput, as_of_iso: str) -> list[ExportFile]:
    computing("rendering")
    plan = render_oscal_assessment_plan(report, as_of_iso)
    return [
        ExportFile("pdf", "application/pdf", ".pdf", render_report_pdf(report)),
        ExportFile("docx", DOCX, ".docx", render_report_docx(report)),
        ExportFile("json", "application/json", ".json", render_report_json(report)),
        ExportFile("soa_csv", "text/csv", ".csv", render_soa_csv(report)),
        ExportFile("soa_xlsx", XLSX, ".xlsx", render_soa_xlsx(report, as_of_iso)),
        ExportFile("findings_csv", "text/csv", ".csv", render_findings_csv(report)),
        ExportFile("findings_xlsx", XLSX, ".xlsx", render_findings_xlsx(report, as_of_iso)),
        ExportFile("poam_csv", "text/csv", ".csv", render_poam_csv(report)),
        ExportFile("poam_closed_csv", "text/csv", ".csv", render_poam_closed_csv(report)),
        ExportFile("poam_xlsx", XLSX, ".xlsx", render_poam_xlsx(report, as_of_iso)),
        ExportFile("oscal_assessment_plan", "application/json", ".json", plan),
        ExportFile(
            "oscal_assessment_results",
            "application/json",
            ".json",
            render_oscal_assessment_results(report, as_of_iso, _plan_link(plan)),
        ),
        ExportFile("oscal_poam", "application/json", ".json", render_oscal_poam(report, as_of_iso)),
    ]


def _plan_link(plan: bytes) -> PlanLink:
    """The plan as the results file finds it: stored beside it, content-addressed."""
    digest = sha256_hex(plan)
    return PlanLink(content_path(Path("..") / "..", digest, ".json").as_posix(), digest)


def store_files(root: Path, files: list[ExportFile]) -> list[dict[str, Any]]:
    """Write each file by its SHA-256; returns how the report artifact lists them."""
    listed = []
    for file in files:
        path, digest = put_bytes(root, file.data, file.suffix)
        listed.append(
            {
                "kind": file.kind,
                "path": str(path),
                "sha256": digest,
                "media_type": file.media_type,
                "bytes": len(file.data),
            }
        )
    return listed


def record_exports(session: Session, artifact_id: uuid.UUID, listed: list[dict[str, Any]]) -> int:
    """One row per (artifact, kind); a re-delivered job adds none. Returns rows added."""
    present = set(
        session.scalars(select(ReportExport.kind).where(ReportExport.artifact_id == artifact_id))
    )
    added = 0
    for entry in listed:
        if entry["kind"] in present:
            continue
        session.add(
            ReportExport(
                artifact_id=artifact_id,
                kind=entry["kind"],
                media_type=entry["media_type"],
                storage_path=entry["path"],
                sha256=entry["sha256"],
                size_bytes=entry["bytes"],
                created_at=utcnow(),
            )
        )
        added += 1
    session.flush()
    return added


def exports_of(session: Session, artifact_id: uuid.UUID) -> list[ReportExport]:
    return list(
        session.scalars(
            select(ReportExport)
            .where(ReportExport.artifact_id == artifact_id)
            .order_by(ReportExport.kind)
        )
    )
