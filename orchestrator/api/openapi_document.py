"""The OpenAPI document, completed once after FastAPI writes it: every error answer as
`application/problem+json` naming the problem types of its status, links from each
creating operation to those that take the id it returns, and request examples.

Done here rather than route by route so routes added later get the same treatment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI

from orchestrator.api.problem_catalog import PROBLEMS
from orchestrator.api.problems import PROBLEM_MEDIA_TYPE
from orchestrator.contracts.text import NUL_FREE_JSON, NUL_FREE_JSON_SCHEMA

Document = dict[str, Any]
_PROBLEM = {"schema": {"$ref": "#/components/schemas/Problem"}}

_ASSESSMENT_ID = {"assessmentId": "$response.body#/id"}
_RUN_ID = {"workflowRunId": "$response.body#/id"}
_RUN_OF_REQUEST = "$request.path.workflowRunId"
_FIRST_ARTIFACT = {"workflowRunId": _RUN_OF_REQUEST, "artifactId": "$response.body#/0/id"}


@dataclass(frozen=True)
class Link:
    """An OpenAPI link: the operation that takes what a response returns, and how."""

    target: str
    parameters: Mapping[str, str] = field(default_factory=dict)
    body: Mapping[str, str] | None = None

    def document(self) -> Document:
        out: Document = {"operationId": self.target, "parameters": dict(self.parameters)}
        if self.body is not None:
            out["requestBody"] = dict(self.body)
        return out


def _next_period(assessment: str) -> Link:
    """The next period's assessment of the same organization, carrying this one's rows.

    Creation's only way in for a client (or a fuzzer) holding an assessment: its
    `organization_id` is the caller's own name for the organization, returned by no
    other operation."""
    return Link(
        "assessments_create",
        body={
            "organization_id": f"$response.body#{assessment}/organization_id",
            "carry_over_from": f"$response.body#{assessment}/id",
        },
    )


#: operationId -> (success status, {link name: link}).
LINKS: Mapping[str, tuple[str, Mapping[str, Link]]] = {
    "assessments_index": ("200", {"next_period": _next_period("/items/0")}),
    "assessments_create": (
        "201",
        {
            "read": Link("assessments_read", _ASSESSMENT_ID),
            "upload_document": Link("assessments_upload", _ASSESSMENT_ID),
            "documents": Link("assessments_documents", _ASSESSMENT_ID),
            "adopt_catalogue": Link("reassessments_adopt", _ASSESSMENT_ID),
            "catalogue_adoptions": Link("reassessments_adoptions", _ASSESSMENT_ID),
            "request_evidence": Link("evidence_requests_create", _ASSESSMENT_ID),
            "evidence_requests": Link("evidence_requests_index", _ASSESSMENT_ID),
            "risk_register": Link("risks_register", _ASSESSMENT_ID),
            "record_risk": Link("risks_create", _ASSESSMENT_ID),
            "start_lifecycle": Link("lifecycle_start", _ASSESSMENT_ID),
            "next_period": _next_period(""),
        },
    ),
    "lifecycle_start": (
        "201",
        {
            "read": Link("lifecycle_read", _RUN_ID),
            "send_signal": Link("lifecycle_signal", _RUN_ID),
            "signals": Link("runs_signals", _RUN_ID),
            "record_approval": Link("approvals_record", _RUN_ID),
            "approvals": Link("approvals_index", _RUN_ID),
            "gates": Link("approvals_gates", _RUN_ID),
            "artifacts": Link("artifacts_index", _RUN_ID),
            "audit": Link("runs_audit", _RUN_ID),
            "steps": Link("runs_steps", _RUN_ID),
            "cancel": Link("lifecycle_cancel", _RUN_ID),
            # Once a run exists, not before: a new assessment has none (404).
            "latest_run": Link(
                "lifecycle_lifecycle", {"assessmentId": "$response.body#/assessment_id"}
            ),
        },
    ),
    "artifacts_index": (
        "200",
        {
            "amend": Link("amendments_amend", _FIRST_ARTIFACT),
            "read": Link("artifacts_read", _FIRST_ARTIFACT),
            "readiness": Link("approvals_readiness", _FIRST_ARTIFACT),
        },
    ),
    "risks_create": (
        "201",
        {
            name: Link(target, {"riskId": "$response.body#/risk_id"})
            for name, target in (
                ("read", "risks_read"),
                ("versions", "risks_versions"),
                ("revise", "risks_revise"),
                ("accept", "risks_accept"),
            )
        },
    ),
    "evidence_requests_create": (
        "201",
        {"revoke": Link("evidence_requests_revoke", {"requestId": "$response.body#/request/id"})},
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
    "risks_create": {
        "title": "Stolen laptop exposes customer data",
        "asset": "Staff laptops holding customer exports",
        "threat": "Theft while travelling",
        "vulnerability": "Disks are not encrypted",
        "likelihood": 3,
        "impact": 4,
        "owner": "user:it-lead@acme.example",
        "treatment": "modify",
        "treatment_plan": "Enforce full-disk encryption through the MDM",
        "controls": ["CRY-05"],
        "requirements": [{"framework": "ISO/IEC 27001:2022", "requirement_id": "A.8.1"}],
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
            name: link.document() for name, link in links.items() if link.target in operations
        }


def _examples(document: Document) -> None:
    operations = _operations(document)
    for operation_id, example in EXAMPLES.items():
        content = operations[operation_id]["requestBody"]["content"]["application/json"]
        content["example"] = example


def _nul_free_json(document: Document) -> None:
    """Define the JSON value free-form objects refer to (`StatesNulFreeObject`)."""
    schemas = document.setdefault("components", {}).setdefault("schemas", {})
    schemas[NUL_FREE_JSON] = NUL_FREE_JSON_SCHEMA


def complete(document: Document) -> Document:
    _nul_free_json(document)
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
