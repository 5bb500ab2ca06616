"""The OpenAPI document, completed once after FastAPI writes it: every error answer as
`application/problem+json` naming the problem types of its status, links from each
creating operation to those that take the id it returns, and request examples.

Done here rather than route by route so routes added later get the same treatment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from fastapi import FastAPI

from orchestrator.api.problem_catalog import PROBLEMS
from orchestrator.api.problems import PROBLEM_MEDIA_TYPE

Document = dict[str, Any]
_PROBLEM = {"schema": {"$ref": "#/components/schemas/Problem"}}

_ASSESSMENT_ID = {"assessmentId": "$response.body#/id"}
_RUN_ID = {"workflowRunId": "$response.body#/id"}
_RUN_OF_REQUEST = "$request.path.workflowRunId"

#: operationId -> (success status, {link name: (target operationId, parameters)}).
LINKS: Mapping[str, tuple[str, Mapping[str, tuple[str, Mapping[str, str]]]]] = {
    "assessments_create": (
        "201",
        {
            "read": ("assessments_read", _ASSESSMENT_ID),
            "upload_document": ("assessments_upload", _ASSESSMENT_ID),
            "documents": ("assessments_documents", _ASSESSMENT_ID),
            "adopt_catalogue": ("reassessments_adopt", _ASSESSMENT_ID),
            "catalogue_adoptions": ("reassessments_adoptions", _ASSESSMENT_ID),
            "request_evidence": ("evidence_requests_create", _ASSESSMENT_ID),
            "evidence_requests": ("evidence_requests_index", _ASSESSMENT_ID),
            "start_lifecycle": ("lifecycle_start", _ASSESSMENT_ID),
            "latest_run": ("lifecycle_lifecycle", _ASSESSMENT_ID),
        },
    ),
    "lifecycle_start": (
        "201",
        {
            "read": ("lifecycle_read", _RUN_ID),
            "send_signal": ("lifecycle_signal", _RUN_ID),
            "signals": ("runs_signals", _RUN_ID),
            "record_approval": ("approvals_record", _RUN_ID),
            "approvals": ("approvals_index", _RUN_ID),
            "gates": ("approvals_gates", _RUN_ID),
            "artifacts": ("artifacts_index", _RUN_ID),
            "audit": ("runs_audit", _RUN_ID),
            "steps": ("runs_steps", _RUN_ID),
            "cancel": ("lifecycle_cancel", _RUN_ID),
        },
    ),
    "artifacts_index": (
        "200",
        {
            "amend": (
                "amendments_amend",
                {"workflowRunId": _RUN_OF_REQUEST, "artifactId": "$response.body#/0/id"},
            ),
            "read": (
                "artifacts_read",
                {"workflowRunId": _RUN_OF_REQUEST, "artifactId": "$response.body#/0/id"},
            ),
            "readiness": (
                "approvals_readiness",
                {"workflowRunId": _RUN_OF_REQUEST, "artifactId": "$response.body#/0/id"},
            ),
        },
    ),
    "evidence_requests_create": (
        "201",
        {"revoke": ("evidence_requests_revoke", {"requestId": "$response.body#/request/id"})},
    ),
}

#: operationId -> a realistic request body.
EXAMPLES: Mapping[str, Any] = {
    "assessments_create": {"organization_id": "acme-org", "name": "2027 SCF assessment"},
    "lifecycle_start": {
        "approval_policies": {
            "soa": {"mode": "unanimous", "approvers": ["user:ana@acme", "user:rui@acme"]}
        }
    },
    "lifecycle_signal": {
        "type": "framework_selected",
        "payload": {"framework": "SOC 2", "categories": ["availability"]},
    },
    "lifecycle_cancel": {"reason": "assessment postponed to Q3"},
    "lifecycle_resume": {"reason": "evidence owner back from leave"},
    "approvals_record": {
        "artifact_kind": "soa",
        "artifact_version": 2,
        "decision": "approved",
        "comment": "complete; exclusions justified",
    },
    "amendments_amend": {
        "reason": "review meeting 2027-03-02",
        "rows": [
            {
                "filter": {"undecided": True},
                "changes": {"implementation_status": "partially_implemented"},
            }
        ],
    },
    "evidence_requests_create": {
        "requirements": ["SOC 2 CC6.1"],
        "recipient": "it-ops@acme.example",
        "instructions": "Please send the MFA enforcement policy and a screenshot of the IdP.",
        "due_on": "2099-03-31",
    },
}


def _problem_types(status: int) -> str:
    codes = sorted(code for code, entry in PROBLEMS.items() if entry.status == status)
    return ", ".join(f"`/problems/{code}`" for code in codes)


def _is_error_answer(response: Document) -> bool:
    """A Problem, FastAPI's validation error, or nothing said (a 503 of the health report
    has a body of its own)."""
    refs = {
        str(media.get("schema", {}).get("$ref", "")).rsplit("/", 1)[-1]
        for media in response.get("content", {}).values()
    }
    return not refs or refs <= {"Problem", "HTTPValidationError"}


def _problems_everywhere(document: Document) -> None:
    """Every 4xx and 5xx as a Problem, with the problem types its status can carry."""
    for operations in document.get("paths", {}).values():
        for operation in operations.values():
            for status, response in operation.get("responses", {}).items():
                if status[:1] not in ("4", "5") or not _is_error_answer(response):
                    continue
                response["content"] = {PROBLEM_MEDIA_TYPE: dict(_PROBLEM)}
                types = _problem_types(int(status))
                if types and "Problem types" not in response.get("description", ""):
                    response["description"] = (
                        f"{response.get('description', '')}. Problem types: {types}".lstrip(". ")
                    )
    schemas = document.get("components", {}).get("schemas", {})
    for unused in ("HTTPValidationError", "ValidationError"):
        schemas.pop(unused, None)


def _operations(document: Document) -> dict[str, Document]:
    return {
        operation["operationId"]: operation
        for operations in document.get("paths", {}).values()
        for operation in operations.values()
        if "operationId" in operation
    }


def _links(document: Document) -> None:
    operations = _operations(document)
    for source, (status, links) in LINKS.items():
        response = operations[source]["responses"][status]
        response["links"] = {
            name: {"operationId": target, "parameters": dict(parameters)}
            for name, (target, parameters) in links.items()
            if target in operations
        }


def _examples(document: Document) -> None:
    operations = _operations(document)
    for operation_id, example in EXAMPLES.items():
        content = operations[operation_id]["requestBody"]["content"]["application/json"]
        content["example"] = example


def complete(document: Document) -> Document:
    _problems_everywhere(document)
    _links(document)
    _examples(document)
    return document


def install(app: FastAPI) -> None:
    """`app.openapi()` answers the completed document (built once)."""
    write: Callable[[], Document] = app.openapi

    def openapi() -> Document:
        if app.openapi_schema is None:
            app.openapi_schema = complete(write())
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
