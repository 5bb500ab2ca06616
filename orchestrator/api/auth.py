"""Who is calling: `Authorization: Bearer <API key>`, resolved to a tenant-bound principal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import Depends
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from orchestrator.api.problems import ApiProblem
from orchestrator.service.apikeys import Principal, Scope, authenticate

bearer = HTTPBearer(
    auto_error=False,
    scheme_name="ApiKey",
    description="An API key created with `lifecycle apikey create`.",
)

_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="lifecycle"'}


async def caller(
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
) -> Principal:
    if credentials is None or credentials.scheme.lower() != "bearer":
        raise ApiProblem(
            401,
            "unauthenticated",
            "send an API key as 'Authorization: Bearer <key>'",
            headers=_CHALLENGE,
        )
    principal = await run_in_threadpool(authenticate, credentials.credentials.strip())
    if principal is None:
        raise ApiProblem(
            401, "invalid_api_key", "the API key is unknown or revoked", headers=_CHALLENGE
        )
    return principal


Caller = Annotated[Principal, Depends(caller)]


def check_scope(principal: Principal, *scopes: Scope) -> None:
    """Pass when the key holds any of `scopes` (or admin)."""
    if not any(principal.allows(scope) for scope in scopes):
        needed = " or ".join(scope.value for scope in scopes)
        raise ApiProblem(
            403,
            "insufficient_scope",
            f"this needs the {needed} scope",
            required_scopes=[scope.value for scope in scopes],
        )


def require(*scopes: Scope) -> Callable[[Principal], Principal]:
    """A dependency: the caller, who must hold one of `scopes`."""

    def dependency(principal: Caller) -> Principal:
        check_scope(principal, *scopes)
        return principal

    return dependency


Reader = Annotated[Principal, Depends(require(Scope.READ))]
Signaller = Annotated[Principal, Depends(require(Scope.SIGNAL))]
Approver = Annotated[Principal, Depends(require(Scope.APPROVE))]
Operator = Annotated[Principal, Depends(require(Scope.OPERATE))]
Admin = Annotated[Principal, Depends(require(Scope.ADMIN))]
