"""Public entry (`/w/:scope/:slug`): the page of an evidence request's link, which needs
no account and takes uploads for that request only, through the API's upload checks."""

from __future__ import annotations

from html import escape

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse

from orchestrator.api.problems import problem_responses
from orchestrator.api.uploads import UPLOAD_BODY, received_upload
from orchestrator.config.settings import get_settings
from orchestrator.service.evidence_requests import (
    PublicRequest,
    public_request,
    upload_through_link,
)

router = APIRouter(prefix="/w/evidence", tags=["public entry"])


def _page(found: PublicRequest, slug: str) -> str:
    items = "".join(f"<li>{escape(r)}</li>" for r in found.requirements)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Evidence request</title>
<meta name="referrer" content="no-referrer"></head><body>
<main>
<h1>Evidence requested from {escape(found.recipient)}</h1>
<p>Due {found.due_on.isoformat()}; this link takes files until
{found.link_expires_at.isoformat(timespec="minutes")}.</p>
<h2>About</h2><ul>{items}</ul>
<h2>Instructions</h2><p>{escape(found.instructions)}</p>
<p id="uploaded">Files received so far: {found.uploaded}</p>
<form method="post" enctype="multipart/form-data" action="/w/evidence/{escape(slug)}">
<input type="file" name="file" required> <button type="submit">Send</button>
</form></main></body></html>"""


@router.get(
    "/{slug}",
    response_class=HTMLResponse,
    summary="The page of an evidence request's link",
    responses=problem_responses(404, 410),
)
def page(slug: str) -> HTMLResponse:
    found = public_request(slug)
    return HTMLResponse(_page(found, slug), headers={"Cache-Control": "no-store"})


@router.post(
    "/{slug}",
    status_code=201,
    summary="Send a file for an evidence request",
    description="multipart/form-data with one `file` part, checked like any upload.",
    openapi_extra={"requestBody": UPLOAD_BODY},
    responses=problem_responses(400, 404, 410, 413, 415, 422, 429),
)
async def upload(slug: str, request: Request) -> JSONResponse:
    await run_in_threadpool(public_request, slug)  # refuse a bad link before reading
    storage = get_settings().resolved_storage_dir
    async with received_upload(
        request, storage / "incoming", get_settings().max_document_bytes
    ) as received:
        view = await run_in_threadpool(
            upload_through_link,
            slug,
            received.filename,
            received.path,
            declared_media_type=received.declared_type,
        )
    body = {"filename": view.filename, "sha256": view.sha256, "duplicate": view.duplicate}
    return JSONResponse(body, status_code=200 if view.duplicate else 201)
