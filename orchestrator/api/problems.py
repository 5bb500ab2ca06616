"""RFC 9457 problem details: every error the API answers, with a stable `code`."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from orchestrator.api.allowed_methods import allowed_methods
from orchestrator.contracts.errors import FleetError, LifecycleError

PROBLEM_MEDIA_TYPE = "application/problem+json"
log = logging.getLogger(__name__)


class FieldError(BaseModel):
    loc: list[str | int]
    msg: str
    type: str


class Problem(BaseModel):
    """An error answer (RFC 9457). `code` is stable; `detail` is for people."""

    model_config = ConfigDict(extra="allow")

    type: str = Field(description="URI reference naming the problem type: /problems/{code}.")
    title: str
    status: int
    detail: str | None = None
    instance: str | None = None
    code: str = Field(description="Stable machine-readable error code.")
    errors: list[FieldError] | None = Field(
        None, description="What was wrong with the request, field by field (422 only)."
    )


class ApiProblem(FleetError):
    """An error raised by the API layer itself (auth, limits, media types, ...)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        *,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail
        self.headers = headers or {}
        self.extra = extra


_STATUS_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    422: "validation_failed",
    500: "internal_error",
}


def problem_response(
    request: Request | None,
    status: int,
    code: str,
    detail: str | None,
    *,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> JSONResponse:
    body: dict[str, Any] = {
        "type": f"/problems/{code}",
        "title": _title(status),
        "status": status,
        "detail": detail,
        "code": code,
    }
    if request is not None:
        body["instance"] = request.url.path
    body.update({key: value for key, value in extra.items() if key not in body})
    return JSONResponse(body, status_code=status, headers=headers, media_type=PROBLEM_MEDIA_TYPE)


def _title(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Error"


def _json_safe(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _json_safe(v) for k, v in value.items()}
    return str(value)


async def _lifecycle_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, LifecycleError)
    extra = {key: _json_safe(value) for key, value in error.details.items()}
    if "errors" in extra:
        extra["errors"] = _field_errors(extra["errors"])
    return problem_response(request, error.http_status, error.code, error.message, **extra)


async def _api_problem(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, ApiProblem)
    return problem_response(
        request,
        error.status,
        error.code,
        error.detail,
        headers=error.headers,
        **{k: _json_safe(v) for k, v in error.extra.items()},
    )


async def _validation_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RequestValidationError)
    return problem_response(
        request,
        422,
        "validation_failed",
        "the request does not match the API's schema",
        errors=_field_errors(error.errors()),
    )


def _field_errors(errors: Any) -> list[dict[str, Any]]:
    if not isinstance(errors, list | tuple):
        return []
    return [
        {
            "loc": [part if isinstance(part, int) else str(part) for part in item.get("loc", ())],
            "msg": str(item.get("msg", "")),
            "type": str(item.get("type", "")),
        }
        for item in errors
        if isinstance(item, dict)
    ]


async def _http_error(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, StarletteHTTPException)
    code = _STATUS_CODES.get(error.status_code, "http_error")
    detail = error.detail if isinstance(error.detail, str) else None
    headers = dict(error.headers or {})
    if error.status_code == 405:  # the router names only its first route's methods
        headers["Allow"] = ", ".join(allowed_methods(request.app, request.scope))
    return problem_response(request, error.status_code, code, detail, headers=headers)


def unexpected_error_response(request: Request) -> JSONResponse:
    """The 500 answer: no internals, the details are in the log."""
    return problem_response(
        request, 500, "internal_error", "an unexpected error occurred; it has been logged"
    )


async def _unexpected(request: Request, error: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path)
    return unexpected_error_response(request)


def install_problem_handlers(app: FastAPI) -> None:
    app.add_exception_handler(LifecycleError, _lifecycle_error)
    app.add_exception_handler(ApiProblem, _api_problem)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)


def problem_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries: these statuses answer a Problem as application/problem+json."""
    return {
        status: {
            "model": Problem,
            "description": _title(status),
            "content": {PROBLEM_MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/Problem"}}},
        }
        for status in statuses
    }
