"""Public entry (`/w/:scope/:slug`): the page of an evidence request's link, which needs
no account and takes uploads for that request only, through the API's upload checks.

A browser (its form asks for `text/html`) gets pages: the request, then "received" after a
redirect (a reload sends nothing twice), or the refusal in words. Other clients get JSON and
problem details, as from the rest of the API."""

from __future__ import annotations

from html import escape
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

from orchestrator.api.problems import ApiProblem, problem_responses
from orchestrator.api.uploads import UPLOAD_BODY, received_upload
from orchestrator.config.settings import get_settings
from orchestrator.contracts.errors import LifecycleError
from orchestrator.contracts.shown_text import shown
from orchestrator.contracts.text import Text
from orchestrator.service.evidence_requests import (
    PublicRequest,
    public_request,
    upload_through_link,
)

router = APIRouter(prefix="/w/evidence", tags=["public entry"])

#: The pages load nothing, run no script and post only back here.
PAGE_HEADERS = {
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
}
_HEAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="referrer" content="no-referrer"><meta name="viewport" content="width=device-width">
<style>body{{font:16px/1.5 system-ui,sans-serif;margin:0;color:#1b1f24}}
main{{max-width:42em;margin:2em auto;padding:0 1em}}h1{{font-size:1.5em}}
[role=status]{{background:#e6f4ea;border-left:4px solid #1e7e34;padding:.5em 1em}}
[role=alert]{{background:#fdecea;border-left:4px solid #b3261e;padding:.5em 1em}}
form{{border:1px solid #c9ced6;padding:1em;border-radius:4px}}</style></head><body>
<main>"""


def _text(value: str) -> str:
    """Escaped, with bidi controls shown: the page's every value from outside."""
    return escape(str(shown(value)))


def _page(found: PublicRequest, slug: str, received: str | None) -> str:
    items = "".join(f"<li>{_text(r)}</li>" for r in found.requirements)
    thanks = (
        f'<p role="status" id="received">Received {_text(received)}. Thank you.</p>'
        if received
        else ""
    )
    return f"""{_HEAD.format(title="Evidence request")}
<h1>Evidence requested from {_text(found.recipient)}</h1>
{thanks}
<p>Due {found.due_on.isoformat()}; this link takes files until
{found.link_expires_at.isoformat(timespec="minutes")}.</p>
<h2>About</h2><ul>{items}</ul>
<h2>Instructions</h2><p>{_text(found.instructions)}</p>
<p id="uploaded">Files received so far: {found.uploaded}</p>
<form method="post" enctype="multipart/form-data" action="/w/evidence/{escape(slug)}">
<label for="file">File</label> <input type="file" id="file" name="file" required>
<button type="submit">Send</button>
</form></main></body></html>"""


def _wants_page(request: Request) -> bool:
    return wants_page(dict(request.headers))


def _refused(error: LifecycleError | ApiProblem, slug: str) -> HTMLResponse:
    if isinstance(error, LifecycleError):
        return refusal_page(error.http_status, error.message, slug)
    return refusal_page(error.status, error.detail, slug)


def refusal_page(status: int, message: str, slug: str) -> HTMLResponse:
    """A refusal in words; a link that still works offers itself again."""
    usable = status not in (404, 410)
    title = "Not received" if usable else "This link takes no files"
    again = f'<p><a href="/w/evidence/{escape(slug)}">Back to the request</a></p>' if usable else ""
    html = f"""{_HEAD.format(title=title)}
<h1>{title}</h1>
<p role="alert" id="refusal">{_text(message.rstrip("."))}.</p>
{again}</main></body></html>"""
    return HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)


def wants_page(scope_headers: dict[str, str]) -> bool:
    """A browser's form asks for HTML."""
    return "text/html" in scope_headers.get("accept", "")


@router.get(
    "/{slug}",
    response_class=HTMLResponse,
    summary="The page of an evidence request's link",
    responses=problem_responses(404, 410),
)
def page(
    request: Request,
    slug: str,
    received: Annotated[Text | None, Query(max_length=255)] = None,
) -> Response:
    try:
        found = public_request(slug)
    except LifecycleError as error:
        if not _wants_page(request):
            raise
        return _refused(error, slug)
    return HTMLResponse(_page(found, slug, received), headers=PAGE_HEADERS)


@router.post(
    "/{slug}",
    status_code=201,
    summary="Send a file for an evidence request",
    description="multipart/form-data with one `file` part, checked like any upload, up to "
    "the document limit. The answer names the file as sent and never tells whether the "
    "assessment already held its content. A browser's form (`Accept: text/html`) is "
    "answered with a redirect to the request's page, or with the refusal as a page.",
    openapi_extra={"requestBody": UPLOAD_BODY},
    responses=problem_responses(400, 404, 410, 413, 415, 422, 429),
)
async def upload(slug: str, request: Request) -> Response:
    try:
        sent_name = await _receive(slug, request)
    except (LifecycleError, ApiProblem) as error:
        if not _wants_page(request):
            raise
        return _refused(error, slug)
    # The answer names what was sent, never what the assessment holds: the same content
    # as a document already there is answered as any accepted file.
    if _wants_page(request):
        return RedirectResponse(
            f"/w/evidence/{quote(slug)}?received={quote(sent_name)}", status_code=303
        )
    return JSONResponse({"filename": sent_name, "received": True}, status_code=201)


async def _receive(slug: str, request: Request) -> str:
    """Store the file sent through the link; the name it was sent under."""
    await run_in_threadpool(public_request, slug)  # refuse a bad link before reading
    storage = get_settings().resolved_storage_dir
    async with received_upload(
        request, storage / "incoming", get_settings().max_document_bytes
    ) as received:
        await run_in_threadpool(
            upload_through_link,
            slug,
            received.filename,
            received.path,
            declared_media_type=received.declared_type,
        )
        return received.filename
