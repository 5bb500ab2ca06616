"""A document arriving over HTTP, stored once per idempotency key: the assessment checked
before the body is read, the file streamed to storage and handed to `store`, answered 201
(200 for content uploaded before) and replayed for the same key and request."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any, Protocol

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from orchestrator.api.idempotency import StoredResponse, check_key, request_hash, run_once
from orchestrator.api.problems import problem_responses
from orchestrator.api.uploads import UPLOAD_BODY, received_upload
from orchestrator.config.settings import get_settings
from orchestrator.service.apikeys import Principal
from orchestrator.service.queries import get_assessment
from orchestrator.service.read_models import DocumentView


def upload_route(*problems: int) -> dict[str, Any]:
    """The route options of an upload answered by `upload_once`: 201 with the document, 200
    for content uploaded before, the multipart body, and `problems`' responses."""
    return {
        "status_code": 201,
        "response_model": DocumentView,
        "openapi_extra": {"requestBody": UPLOAD_BODY},
        "responses": {
            200: {"model": DocumentView, "description": "The same content was uploaded before"},
            **problem_responses(*problems),
        },
    }


class StoreUpload(Protocol):
    """Stores the received file: a service's upload with its leading arguments bound."""

    def __call__(
        self, filename: str, path: Path, *, declared_media_type: str | None
    ) -> DocumentView: ...


async def upload_once(
    request: Request,
    principal: Principal,
    assessment_id: uuid.UUID,
    idempotency_key: str | None,
    store: StoreUpload,
) -> JSONResponse:
    key = check_key(idempotency_key)
    # Refuse an unknown assessment before reading a possibly large body.
    await run_in_threadpool(get_assessment, principal.actor, assessment_id)
    settings = get_settings()
    async with received_upload(
        request, settings.resolved_storage_dir / "incoming", settings.max_document_bytes
    ) as received:

        def action() -> StoredResponse:
            view = store(
                received.filename, received.path, declared_media_type=received.declared_type
            )
            return StoredResponse(200 if view.duplicate else 201, view.model_dump(mode="json"), {})

        fingerprint = request_hash(
            "POST",
            request.url.path,
            {
                "filename": received.filename,
                "declared_type": received.declared_type,
                "sha256": received.sha256,
            },
        )
        return await run_in_threadpool(run_once, principal, key, fingerprint, action)
