"""Signing in with an API key, and out."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Request, Response
from fastapi.concurrency import run_in_threadpool

from orchestrator.config.settings import get_settings
from orchestrator.console.sessions import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    issue_cookie,
    new_login_token,
    same_token,
)
from orchestrator.console.web import ConsoleRoute, Posted, Session, render, see_other
from orchestrator.service.apikeys import authenticate
from orchestrator.service.console_sessions import end_session

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


def secure_cookies(request: Request) -> bool:
    """Secure cookies behind TLS (uvicorn's proxy headers set the scheme)."""
    return request.url.scheme == "https"


def safe_next(target: str | None) -> str:
    """Only a console path: never an open redirect to another site."""
    if target and target.startswith("/console") and not target.startswith("//"):
        return target
    return "/console/queue"


def set_session_cookie(request: Request, response: Response, value: str, ttl: int) -> None:
    response.set_cookie(
        SESSION_COOKIE,
        value,
        max_age=ttl,
        httponly=True,
        samesite="lax",
        secure=secure_cookies(request),
        path="/console",
    )


def _provider() -> str | None:
    """The identity provider's name when sign-in with it is configured."""
    settings = get_settings().oidc
    return settings.shown_name if settings.enabled else None


@router.get("", name="console_home")
def home(session: Session) -> Response:
    return see_other("/console/queue")


@router.get("/login", name="console_login")
def login_page(request: Request, next: str | None = None) -> Response:
    return _login_form(request, next)


@router.post("/login", name="console_login_post")
async def login(
    request: Request,
    api_key: Annotated[str, Form(max_length=300)] = "",
    csrf_token: Annotated[str, Form(max_length=200)] = "",
    next: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    if not same_token(request.cookies.get(LOGIN_CSRF_COOKIE), csrf_token):
        return _login_again(
            request,
            403,
            "The sign-in form expired or was not sent from this console. Try again.",
            next,
        )
    principal = await run_in_threadpool(authenticate, api_key.strip())
    if principal is None:
        return _login_again(request, 401, "That API key is unknown or revoked.", next)
    value, ttl = issue_cookie(principal)
    response = see_other(safe_next(next))
    set_session_cookie(request, response, value, ttl)
    response.delete_cookie(LOGIN_CSRF_COOKIE, path="/console")
    return response


def _login_again(request: Request, status: int, message: str, next: str) -> Response:
    return _login_form(request, next, status_code=status, error=message)


def _login_form(
    request: Request, next: str | None, *, status_code: int = 200, error: str | None = None
) -> Response:
    """The sign-in form with a fresh token, the same in its cookie (the form's CSRF check)."""
    token = new_login_token()
    response = render(
        request,
        None,
        "login.html",
        status_code=status_code,
        error=error,
        login_token=token,
        next=safe_next(next),
        provider=_provider(),
    )
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        max_age=1800,
        httponly=True,
        samesite="strict",
        secure=secure_cookies(request),
        path="/console",
    )
    return response


@router.post("/logout", name="console_logout")
def logout(session: Posted) -> Response:
    end_session(session.session_id, session.expires_at)
    response = see_other("/console/login")
    response.delete_cookie(SESSION_COOKIE, path="/console")
    return response
