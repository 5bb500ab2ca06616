"""Assessments: list and create, upload several documents at once or a new version of one
(renewing evidence, which reassesses what cites it), start the lifecycle, see its
reassessments and retry a failed one. The create form carries a key: sent twice, it
creates one assessment."""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse
from starlette.datastructures import UploadFile

from orchestrator.config.console import CONSOLE_UPLOAD_FILES
from orchestrator.config.settings import get_settings
from orchestrator.console.form_once import created_once
from orchestrator.console.web import (
    ConsoleRoute,
    PageError,
    Posted,
    Session,
    action_key,
    need,
    render,
    see_other,
)
from orchestrator.contracts.errors import LifecycleError, NotFound, ReassessmentNotFailed
from orchestrator.contracts.origins import StartOrigin
from orchestrator.service.apikeys import Scope
from orchestrator.service.authority import RunAuthority
from orchestrator.service.document_outcomes import list_outcomes
from orchestrator.service.document_versions import upload_document_version
from orchestrator.service.documents import upload_document_file
from orchestrator.service.producer import create_assessment, get_lifecycle, start_lifecycle
from orchestrator.service.queries import get_assessment, list_assessments
from orchestrator.service.read_models import DocumentView
from orchestrator.service.reassessments import (
    get_reassessment,
    list_reassessments,
    retry_reassessment,
)
from orchestrator.service.roster import RosterRole, roster

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)

MAX_FILES = CONSOLE_UPLOAD_FILES


@router.get("/assessments", name="console_assessments")
def assessments(request: Request, session: Session, cursor: str | None = None) -> HTMLResponse:
    need(session, Scope.READ)
    page = list_assessments(session.principal.actor, limit=50, cursor=cursor)
    return render(request, session, "assessments.html", page=page, create_key=action_key())


@router.post("/assessments", name="console_assessment_create")
def create(
    session: Posted,
    key: Annotated[str, Form(min_length=8, max_length=64)],
    organization_id: Annotated[str, Form(max_length=128)] = "",
    name: Annotated[str, Form(max_length=300)] = "",
) -> Response:
    need(session, Scope.SIGNAL)
    organization = organization_id.strip()

    def make() -> str:
        view = create_assessment(session.principal.actor, organization, name)
        return f"/console/assessments/{view.id}"

    fields = {"organization_id": organization, "name": name}
    return see_other(created_once(session.principal, "assessment", key, fields, make).location)


@router.get("/assessments/{assessment_id}", name="console_assessment")
def assessment(
    request: Request,
    session: Session,
    assessment_id: uuid.UUID,
    uploaded: str | None = None,
    notice: Annotated[str | None, Query(max_length=300)] = None,
) -> HTMLResponse:
    need(session, Scope.READ)
    actor = session.principal.actor
    view = get_assessment(actor, assessment_id)
    try:
        run = get_lifecycle(actor, assessment_id)
    except NotFound:
        run = None
    return render(
        request,
        session,
        "assessment.html",
        assessment=view,
        run=run,
        documents=list_outcomes(actor, assessment_id),
        reassessments=list_reassessments(actor, assessment_id),
        people=roster(actor, assessment_id),
        roster_roles=list(RosterRole),
        start_key=action_key(),
        roster_key=action_key(),
        notice=notice,
    )


@dataclass(frozen=True)
class UploadResult:
    filename: str
    outcome: str
    detail: str


@router.post("/assessments/{assessment_id}/documents", name="console_upload")
async def upload(request: Request, session: Posted, assessment_id: uuid.UUID) -> Response:
    """Several files in one form: each is checked and stored on its own, and a refused one
    says why without stopping the others."""
    need(session, Scope.SIGNAL)
    actor = session.principal.actor
    view = await run_in_threadpool(get_assessment, actor, assessment_id)
    form = await request.form()
    files = [
        item for item in form.getlist("files") if isinstance(item, UploadFile) and item.filename
    ]
    if not files:
        raise PageError(422, "No files", "Choose one or more files to upload.")
    if len(files) > MAX_FILES:
        raise PageError(422, "Too many files", f"Upload at most {MAX_FILES} files at once.")
    incoming = get_settings().resolved_storage_dir / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)

    def store(name: str, path: Path, media_type: str | None) -> DocumentView:
        return upload_document_file(
            actor, assessment_id, name, path, declared_media_type=media_type
        )

    results = [await run_in_threadpool(_store_one, store, item, incoming) for item in files]
    documents = await run_in_threadpool(list_outcomes, actor, assessment_id)
    return render(
        request, session, "uploaded.html", assessment=view, results=results, documents=documents
    )


@router.post(
    "/assessments/{assessment_id}/documents/{document_id}/versions", name="console_new_version"
)
async def new_version(
    request: Request, session: Posted, assessment_id: uuid.UUID, document_id: uuid.UUID
) -> Response:
    """One file as the next version of a document: the owner renewing expiring evidence."""
    need(session, Scope.SIGNAL)
    actor = session.principal.actor
    view = await run_in_threadpool(get_assessment, actor, assessment_id)
    item = (await request.form()).get("file")
    if not isinstance(item, UploadFile) or not item.filename:
        raise PageError(422, "No file", "Choose the file of the new version to upload.")
    incoming = get_settings().resolved_storage_dir / "incoming"
    incoming.mkdir(parents=True, exist_ok=True)

    def store(name: str, path: Path, media_type: str | None) -> DocumentView:
        return upload_document_version(
            actor, assessment_id, document_id, name, path, declared_media_type=media_type
        )

    result = await run_in_threadpool(_store_one, store, item, incoming)
    documents = await run_in_threadpool(list_outcomes, actor, assessment_id)
    return render(
        request, session, "uploaded.html", assessment=view, results=[result], documents=documents
    )


Store = Callable[[str, Path, str | None], DocumentView]


def _store_one(store: Store, item: UploadFile, incoming: Path) -> UploadResult:
    name = item.filename or "upload"
    handle, temp = tempfile.mkstemp(dir=incoming, prefix=".console-")
    try:
        with open(handle, "wb") as sink:
            item.file.seek(0)
            shutil.copyfileobj(item.file, sink)
        view = store(name, Path(temp), item.content_type)
    except LifecycleError as error:
        return UploadResult(name, "refused", error.message)
    finally:
        Path(temp).unlink(missing_ok=True)
    if view.duplicate:
        return UploadResult(name, "duplicate", "the same content was uploaded before")
    return UploadResult(name, "uploaded", f"{view.media_type}, {view.size_bytes} bytes")


@router.post("/assessments/{assessment_id}/start", name="console_start")
def start(
    session: Posted,
    assessment_id: uuid.UUID,
    key: Annotated[str, Form(min_length=8, max_length=64)],
) -> Response:
    need(session, Scope.SIGNAL)
    run = start_lifecycle(
        session.principal.actor,
        assessment_id,
        f"console:{key}",
        origin=StartOrigin.USER,
        authority=RunAuthority.of_principal(session.principal),
    )
    return see_other(f"/console/runs/{run.id}")


@router.post("/reassessments/{reassessment_id}/retry", name="console_reassessment_retry")
def retry(session: Posted, reassessment_id: uuid.UUID) -> Response:
    """Send a failed reassessment again (the API's service); a second click finds it
    pending or done, and says so."""
    need(session, Scope.SIGNAL)
    actor = session.principal.actor
    try:
        view = retry_reassessment(actor, reassessment_id)
        notice = "Reassessment sent again: it is pending until its job ends"
    except ReassessmentNotFailed as refused:
        view, notice = get_reassessment(actor, reassessment_id), refused.message
    return see_other(f"/console/assessments/{view.assessment_id}?notice={quote(notice)}")
