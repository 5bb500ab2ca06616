"""A run's artifacts (drafts, versions) and the report, as metadata or as files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse, Response

from orchestrator.api.auth import Reader
from orchestrator.api.paths import ArtifactId, RunId
from orchestrator.api.problems import problem_responses
from orchestrator.api.schemas import ArtifactDetail
from orchestrator.config.settings import get_settings
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.fedramp_exports import check_fedramp_export
from orchestrator.service.queries import (
    ArtifactContent,
    get_artifact,
    latest_report,
    list_artifacts,
)
from orchestrator.service.read_models import ArtifactView

router = APIRouter(
    prefix="/api/v1/workflows",
    tags=["artifacts"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

_FILE_RESPONSE: dict[int | str, dict[str, Any]] = {
    200: {
        "description": "The artifact's file (the rendered report) or its JSON content.",
        "content": {
            "text/html": {"schema": {"type": "string"}},
            "application/json": {"schema": {"type": "object"}},
            "application/pdf": {"schema": {"type": "string", "format": "binary"}},
            "application/vnd.openxmlformats-officedocument.wordprocessingml.document": {
                "schema": {"type": "string", "format": "binary"}
            },
            "text/csv": {"schema": {"type": "string"}},
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": {
                "schema": {"type": "string", "format": "binary"}
            },
            "application/octet-stream": {"schema": {"type": "string", "format": "binary"}},
        },
    }
}

ReportFormat = Annotated[
    str,
    Query(
        pattern=r"^[a-z][a-z0-9_]{0,31}$",
        description="`html` (the rendered report) or one of its exports: `pdf`, `docx`, `json`, "
        "`soa_csv`, `soa_xlsx`, `findings_csv`, `findings_xlsx`, `poam_csv`, `poam_closed_csv`, "
        "`poam_xlsx`, `oscal_assessment_plan`, "
        "`oscal_assessment_results`, `oscal_poam`.",
    ),
]


ForFedramp = Annotated[
    bool,
    Query(
        description="The OSCAL export is for FedRAMP: refused (409 `fedramp_settings_missing`, "
        "naming the setting) while it holds a placeholder SSP link or system id.",
    ),
]


@router.get(
    "/{workflowRunId}/artifacts", response_model=list[ArtifactView], summary="A run's artifacts"
)
def index(run_id: RunId, principal: Reader, kind: ArtifactKind | None = None) -> list[ArtifactView]:
    return list_artifacts(principal.actor, run_id, kind.value if kind else None)


@router.get(
    "/{workflowRunId}/artifacts/{artifactId}",
    response_model=ArtifactDetail,
    summary="One artifact with its content",
)
def read(run_id: RunId, artifact_id: ArtifactId, principal: Reader) -> ArtifactDetail:
    found = get_artifact(principal.actor, run_id, artifact_id)
    return ArtifactDetail(**found.view.model_dump(), content=found.content)


@router.get(
    "/{workflowRunId}/artifacts/{artifactId}/download",
    response_class=Response,
    responses=_FILE_RESPONSE,
    summary="Download an artifact",
)
def download(run_id: RunId, artifact_id: ArtifactId, principal: Reader) -> Response:
    return _file(get_artifact(principal.actor, run_id, artifact_id))


@router.get(
    "/{workflowRunId}/report",
    response_class=Response,
    responses={**_FILE_RESPONSE, **problem_responses(409)},
    summary="Download the run's newest report",
)
def report(
    run_id: RunId, principal: Reader, format: ReportFormat = "html", fedramp: ForFedramp = False
) -> Response:
    found = latest_report(principal.actor, run_id)
    if fedramp:
        check_fedramp_export(found.content, found.view.version, format)
    if format == "html":
        return _file(found)
    return _export(found, format)


def _export(found: ArtifactContent, kind: str) -> Response:
    """One of the files rendered with the report (listed in its content as `exports`)."""
    exports = [e for e in found.content.get("exports", []) if isinstance(e, dict)]
    entry = next((e for e in exports if e.get("kind") == kind), None)
    version = found.view.version
    if entry is None:
        available = ", ".join(["html", *(str(e.get("kind")) for e in exports)])
        raise NotFound(f"report v{version} has no {kind} export; available: {available}")
    path = Path(str(entry.get("path", ""))).resolve()
    if not path.is_relative_to(get_settings().resolved_storage_dir) or not path.is_file():
        raise NotFound(f"the {kind} export of report v{version} is missing from storage")
    return FileResponse(
        path,
        media_type=str(entry.get("media_type") or "application/octet-stream"),
        headers=_disposition(f"report-v{version}-{kind}{path.suffix}"),
    )


#: The report is generated from uploaded text: shown in a browser it may style itself and
#: nothing more (no script, no fetches, no forms, framed only by this origin's console).
REPORT_CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'self'"
)


def _file(found: ArtifactContent) -> Response:
    """The artifact's file; an HTML report is shown in the browser (inline, locked down by
    its CSP), everything else is a download."""
    view = found.view
    name = f"{view.kind}-v{view.version}"
    if found.file is None:
        return Response(
            json.dumps(found.content, sort_keys=True, default=str),
            media_type="application/json",
            headers=_disposition(f"{name}.json"),
        )
    if not found.file.is_file():
        raise NotFound(f"the file of {view.kind} v{view.version} is missing from storage")
    filename = f"{name}{found.file.suffix}"
    if view.media_type.split(";")[0].strip() == "text/html":
        return FileResponse(
            found.file,
            media_type="text/html; charset=utf-8",
            headers={
                **_disposition(filename, inline=True),
                "Content-Security-Policy": REPORT_CSP,
                "X-Content-Type-Options": "nosniff",
            },
        )
    return FileResponse(found.file, media_type=view.media_type, headers=_disposition(filename))


def _disposition(filename: str, *, inline: bool = False) -> dict[str, str]:
    kind = "inline" if inline else "attachment"
    return {"Content-Disposition": f'{kind}; filename="{filename}"'}
