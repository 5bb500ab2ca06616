"""What every console page shares: the signed-in person, CSRF checks, rendering, and error
pages (a LifecycleError becomes a page with the same status the API would answer; anything
unexpected, the console's own 500 page, never a raw error)."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar
from urllib.parse import quote

from fastapi import Depends, Form, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.routing import APIRoute
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.exceptions import HTTPException

from orchestrator.console import values
from orchestrator.console.sessions import SESSION_COOKIE, ConsoleSession, read_cookie, same_token
from orchestrator.console.settings import get_console_settings
from orchestrator.contracts.errors import DatabaseBusy, FleetError, LifecycleError
from orchestrator.contracts.shown_text import shown
from orchestrator.contracts.text import NUL
from orchestrator.db.busy import is_busy
from orchestrator.service.apikeys import Scope
from orchestrator.service.queries import reads_in_one_transaction
from orchestrator.service.review_queue import queue_count

log = logging.getLogger(__name__)

TEMPLATES = Environment(
    loader=FileSystemLoader(Path(__file__).parent / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    # Every value a page shows: a name's bidi controls cannot reorder it on screen.
    finalize=shown,
)
values.install(TEMPLATES.globals)


class SignInRequired(FleetError):
    """No valid session: the person is sent to the sign-in page."""


class PageError(FleetError):
    def __init__(
        self, status: int, title: str, message: str, links: list[tuple[str, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.title, self.message = status, title, message
        self.links = links or []
        """(label, URL) of what the person can do next."""


TITLES = {
    400: "Bad request",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    409: "Conflict",
    413: "Too large",
    422: "Not accepted",
    503: "Database busy",
}
#: What a person who posted a form needs to know when it failed: whether to try again.
_MAYBE_APPLIED = (
    "Your action may or may not have been applied: check the run page before you try "
    "again (a decision sent twice from the same form acts once)."
)
_NOT_APPLIED = "Nothing was changed: try again in a moment."


class ConsoleRoute(APIRoute):
    """Console routes answer with HTML pages, also when something goes wrong."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = _in_one_read(super().get_route_handler(), self.endpoint)

        async def guarded(request: Request) -> Response:
            try:
                refused = await nul_refusal(request)
                if refused:
                    return await error_page(request, 422, "Not accepted", refused)
                return await handler(request)
            except SignInRequired:
                target = quote(
                    request.url.path + (f"?{request.url.query}" if request.url.query else ""),
                    safe="",
                )
                return RedirectResponse(f"/console/login?next={target}", status_code=303)
            except PageError as error:
                return await error_page(
                    request, error.status, error.title, error.message, error.links
                )
            except DatabaseBusy:
                return await error_page(request, 503, "Database busy", _busy_message(request))
            except LifecycleError as error:
                status = error.http_status
                return await error_page(
                    request, status, TITLES.get(status, "Refused"), error.message
                )
            except RequestValidationError as error:
                return await _invalid_request_page(request, error)
            except Exception as error:  # a bug or an outage: the console's page, details logged
                if is_busy(error):  # a write lock held past the busy timeout, not retried here
                    log.warning("database busy on %s %s", request.method, request.url.path)
                    return await error_page(request, 503, "Database busy", _busy_message(request))
                log.exception("console error on %s %s", request.method, request.url.path)
                return await error_page(
                    request, 500, "Something went wrong", unexpected_message(request)
                )

        return guarded


_READS_ONCE = "console_reads_once"
Endpoint = TypeVar("Endpoint", bound=Callable[..., Any])


def reads_once(endpoint: Endpoint) -> Endpoint:
    """Marks a page that only reads: its whole request (the sign-in check, the page's
    data, the header's count) reads in one read transaction, one snapshot."""
    setattr(endpoint, _READS_ONCE, True)
    return endpoint


def _in_one_read(
    handler: Callable[[Request], Coroutine[Any, Any, Response]], endpoint: Callable[..., Any]
) -> Callable[[Request], Coroutine[Any, Any, Response]]:
    """The handler of a `reads_once` page in its one read; any other as it is."""
    if not getattr(endpoint, _READS_ONCE, False):
        return handler

    async def reading(request: Request) -> Response:
        with reads_in_one_transaction() as shared:
            try:
                return await handler(request)
            finally:  # ended off the event loop: on PostgreSQL a round trip
                await run_in_threadpool(shared.close)

    return reading


async def _invalid_request_page(request: Request, error: RequestValidationError) -> Response:
    refused = form_refusal(error.errors())
    if refused:  # a field of the form: the page names it and its limit
        return await error_page(request, 422, "Not accepted", refused)
    # A malformed id in the URL names nothing: the same page as an unknown id.
    return await error_page(request, 404, "Not found", "There is no such page in the console.")


def form_refusal(errors: Sequence[Any]) -> str:
    """What was wrong with a posted form's fields, in words naming each field and its limit;
    "" when no field of a form or query is at fault (a malformed id in the URL)."""
    said = []
    for error in errors:
        loc = list(error.get("loc") or ())
        if not loc or loc[0] == "path":
            continue
        field = str(loc[-1]).replace("_", " ")
        ctx = error.get("ctx") or {}
        if error.get("type") == "string_too_long":
            said.append(f"The {field} is too long: at most {ctx.get('max_length')} characters.")
        else:
            said.append(f"The {field} was not accepted: {error.get('msg', 'invalid')}.")
    return " ".join(said)


_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


async def nul_refusal(request: Request) -> str:
    """The boundary rule for text, on every console form and query: no field may hold the
    NUL character (PostgreSQL cannot store it). Words naming each such field; "" if none.
    Checked before the route reads anything, so no form is left out."""
    fields = list(request.query_params.multi_items())
    if request.headers.get("content-type", "").startswith(_FORM_TYPES):
        try:
            form = await request.form()  # kept on the request: the route reads the same
        except HTTPException as error:  # a malformed body: the form cannot be read at all
            said = f"The form could not be read: {error.detail}"
            raise PageError(400, "Bad request", said) from error
        fields += [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    named = sorted({name for name, value in fields if NUL in name or NUL in value})
    return " ".join(
        f"The {name.replace(NUL, '').replace('_', ' ') or 'unnamed field'} was not accepted: "
        "it must not contain the NUL character (U+0000)."
        for name in named
    )


def _busy_message(request: Request) -> str:
    what = "The database stayed busy longer than the console waits."
    posted = request.method == "POST"
    return f"{what} {_MAYBE_APPLIED if posted else _NOT_APPLIED}"


def unexpected_message(request: Request) -> str:
    what = "The console could not complete this request; the error has been logged."
    return f"{what} {_MAYBE_APPLIED if request.method == 'POST' else _NOT_APPLIED}"


_RUN_PATH = re.compile(r"^/console/runs/([0-9a-fA-F-]{36})(?:/|$)")


def _run_page(request: Request) -> str | None:
    """The run page of a run's URL: where a person checks what a failed action did."""
    found = _RUN_PATH.match(request.url.path)
    return f"/console/runs/{found.group(1)}" if found else None


async def error_page(
    request: Request,
    status: int,
    title: str,
    message: str,
    links: list[tuple[str, str]] | None = None,
) -> HTMLResponse:
    context = {
        "title": title,
        "message": message,
        "run_page": _run_page(request),
        "links": links or [],
        "status": status,
    }
    try:
        session = await run_in_threadpool(read_cookie, request.cookies.get(SESSION_COOKIE))
        return await run_in_threadpool(
            lambda: render(request, session, "error.html", status_code=status, **context)
        )
    except Exception:  # the page itself needs the database (the queue count): go without
        log.warning("console error page rendered without the session", exc_info=True)
        return render(request, None, "error.html", status_code=status, **context)


def render(
    request: Request,
    session: ConsoleSession | None,
    template: str,
    *,
    status_code: int = 200,
    **context: Any,
) -> HTMLResponse:
    count = queue_count(session.principal) if session is not None else None
    html = TEMPLATES.get_template(template).render(
        request=request,
        session=session,
        queue_count=count,
        Scope=Scope,
        poll_interval_ms=int(get_console_settings().poll_interval_s * 1000),
        claim_ttl_s=get_console_settings().claim_ttl_s,
        **context,
    )
    return HTMLResponse(
        html,
        status_code=status_code,
        headers={
            "Cache-Control": "no-store",
            "X-Frame-Options": "SAMEORIGIN",
            "Content-Security-Policy": "default-src 'self'; frame-ancestors 'self'; "
            "form-action 'self'; base-uri 'none'",
        },
    )


async def signed_in(request: Request) -> ConsoleSession:
    session = await run_in_threadpool(read_cookie, request.cookies.get(SESSION_COOKIE))
    if session is None:
        raise SignInRequired()
    return session


async def posted(request: Request) -> ConsoleSession:
    """A signed-in POST whose form carries the session's CSRF token."""
    session = await signed_in(request)
    form = await request.form()
    if not same_token(session.csrf_token, str(form.get("csrf_token") or "")):
        raise PageError(
            403,
            "Form refused",
            "The form was not sent from a console page "
            "(its security token is missing or wrong). Reload the page and try "
            "again.",
        )
    return session


Session = Annotated[ConsoleSession, Depends(signed_in)]
Posted = Annotated[ConsoleSession, Depends(posted)]


def need(session: ConsoleSession, *scopes: Scope) -> None:
    """The same scope rule as the API: any of `scopes`, or admin."""
    if not any(session.principal.allows(scope) for scope in scopes):
        needed = " or ".join(scope.value for scope in scopes)
        raise PageError(
            403,
            "Not allowed",
            f"This needs the {needed} scope; {_whose(session)} "
            f"({session.principal.principal}) does not hold it.",
        )


def _whose(session: ConsoleSession) -> str:
    # A person signed in with the identity provider holds no key: their groups give scopes.
    return "your key" if session.principal.key_id else "what your groups are mapped to"


#: The confirmation box of a form that acts for good ("yes" when ticked).
Confirm = Annotated[str, Form()]


def confirmed(confirm: str) -> None:
    """A form that acts for good carries a confirmation box: refused unless it is ticked."""
    if confirm != "yes":
        raise PageError(422, "Not confirmed", "Tick the confirmation box to go ahead.")


def see_other(url: str) -> RedirectResponse:
    return RedirectResponse(url, status_code=303)


def action_key() -> str:
    """A fresh key for one form: posting the same form twice acts once."""
    return uuid.uuid4().hex
