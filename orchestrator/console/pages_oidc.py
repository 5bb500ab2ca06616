"""Signing in with the OIDC identity provider: the redirect to it and its callback.

The callback creates the same kind of console session the API-key sign-in creates, for the
principal `oidc:<issuer host>:<subject>`; what it may do is what an admin mapped the
person's groups to. A person whose groups map to nothing is refused, with a page that says
so, instead of getting a session that can do nothing.
"""

from __future__ import annotations

import logging

import httpx2
from authlib.integrations.base_client.errors import OAuthError
from fastapi import APIRouter, Request, Response
from fastapi.concurrency import run_in_threadpool
from joserfc.errors import JoseError

from orchestrator.config.oidc import OidcSettings
from orchestrator.console.oidc import (
    FLOW_COOKIE,
    FLOW_TTL_S,
    client,
    flow_cookie,
    groups_of,
    oidc_settings,
    read_flow_cookie,
    use_flow_state,
)
from orchestrator.console.pages_auth import safe_next, secure_cookies, set_session_cookie
from orchestrator.console.sessions import issue_cookie
from orchestrator.console.web import ConsoleRoute, PageError, see_other
from orchestrator.service.oidc_access import record_sign_in

log = logging.getLogger(__name__)

router = APIRouter(prefix="/console/login/oidc", route_class=ConsoleRoute, include_in_schema=False)

_AGAIN = [("Sign in again", "/console/login")]


def _configured() -> OidcSettings:
    settings = oidc_settings()
    if not settings.enabled:
        raise PageError(404, "Not found", "Sign-in with an identity provider is not configured.")
    return settings


@router.get("", name="console_oidc_start")
async def start(request: Request, next: str | None = None) -> Response:
    settings = _configured()
    state: dict[str, object] = use_flow_state(request, {})
    redirect_uri = str(request.url_for("console_oidc_callback"))
    try:
        response = await client(settings).authorize_redirect(request, redirect_uri)
    except (httpx2.HTTPError, OAuthError, ValueError) as error:
        log.warning("identity provider unreachable at sign-in: %s", error)
        raise _unreachable() from error
    response.set_cookie(
        FLOW_COOKIE,
        flow_cookie(state, safe_next(next)),
        max_age=FLOW_TTL_S,
        httponly=True,
        samesite="lax",  # sent on the provider's top-level redirect back to the callback
        secure=secure_cookies(request),
        path="/console/login/oidc",
    )
    return response


@router.get("/callback", name="console_oidc_callback")
async def callback(request: Request) -> Response:
    settings = _configured()
    flow = read_flow_cookie(request.cookies.get(FLOW_COOKIE))
    if flow is None:
        raise PageError(
            400,
            "Sign-in refused",
            "The sign-in was not started from this browser or took too long. Sign in again.",
            _AGAIN,
        )
    state, next_page = flow
    use_flow_state(request, state)
    try:
        token = await client(settings).authorize_access_token(request)
    except OAuthError as error:  # a state this browser did not start, or the provider said no
        raise PageError(
            403,
            "Sign-in refused",
            f"The identity provider's answer was refused ({error.error}). Sign in again.",
            _AGAIN,
        ) from error
    except JoseError as error:  # the ID token's signature or claims did not hold
        log.warning("ID token refused: %s", error)
        raise PageError(
            403, "Sign-in refused", "The identity provider's ID token was not valid.", _AGAIN
        ) from error
    except httpx2.HTTPError as error:
        log.warning("identity provider unreachable at callback: %s", error)
        raise _unreachable() from error
    userinfo = dict(token.get("userinfo") or {})
    subject = str(userinfo.get("sub") or "")
    if not subject:
        raise PageError(403, "Sign-in refused", "The ID token names no subject.", _AGAIN)
    issuer, tenant = str(settings.issuer), str(settings.tenant)  # both set when enabled
    principal_id, principal = await run_in_threadpool(
        lambda: record_sign_in(
            tenant_id=tenant,
            issuer=issuer,
            issuer_host=settings.issuer_host,
            subject=subject,
            email=str(userinfo["email"]) if userinfo.get("email") else None,
            groups=groups_of(userinfo, settings.groups_claim),
        )
    )
    if principal is None:
        raise PageError(
            403,
            "No access",
            f"You signed in at {settings.shown_name} as {userinfo.get('email') or subject} "
            f"({principal_id}), but none of your groups is mapped to a role in this console. "
            "Ask an admin to map one of your groups (`lifecycle oidc-group map`).",
        )
    value, ttl = issue_cookie(principal)
    response = see_other(next_page)
    set_session_cookie(request, response, value, ttl)
    response.delete_cookie(FLOW_COOKIE, path="/console/login/oidc")
    return response


def _unreachable() -> PageError:
    return PageError(
        502,
        "Identity provider unreachable",
        "The console could not reach the identity provider. Try again in a moment.",
        _AGAIN,
    )
