"""Requests carrying a NUL character (or a lone surrogate) in one text field each, and what
must come of them: 422 naming the field, nothing stored. Shared by the SQLite and the
PostgreSQL tests."""

from __future__ import annotations

import json
from typing import Any

from sqlalchemy import func, select

from orchestrator.db.continuous_models import EvidenceRequest
from orchestrator.db.models import (
    ApprovalEvent,
    Assessment,
    Document,
    InboxSignal,
    WorkflowRun,
)
from orchestrator.db.risk_models import Risk
from orchestrator.db.session import transaction
from tests.api.conftest import Api

NUL = "\u0000"
SURROGATE = "\ud800"


def _rows() -> dict[str, int]:
    with transaction() as session:
        return {
            model.__name__: int(session.scalar(select(func.count()).select_from(model)) or 0)
            for model in (
                Assessment,
                WorkflowRun,
                InboxSignal,
                ApprovalEvent,
                Document,
                EvidenceRequest,
                Risk,
            )
        }


def _problem(response: Any) -> dict[str, Any]:
    assert response.status_code == 422, response.text
    assert response.headers["content-type"] == "application/problem+json", response.text
    return dict(response.json())


def assert_nul_refused_everywhere(api: Api) -> None:
    _assert_refused_everywhere(api, NUL, {"nul_character"}, "nul")


def assert_lone_surrogate_refused_everywhere(api: Api) -> None:
    """Text no UTF-8 holds (JSON's `\ud800` escape): refused as a NUL is, nothing stored."""
    # pydantic's own JSON parser refuses it first where it reads the body (string_unicode).
    _assert_refused_everywhere(api, SURROGATE, {"lone_surrogate", "string_unicode"}, "unicode")


def _assert_refused_everywhere(api: Api, bad: str, kinds: set[str], word: str) -> None:
    headers = api.key()
    assessment = api.create_assessment(headers)["id"]
    uploaded = api.upload(headers, assessment, "policy.md", b"# Policy\n\nText.\n")
    assert uploaded.status_code == 201, uploaded.text
    document = uploaded.json()["id"]
    evidence_request = {
        "requirements": ["SCF IAC-01"],
        "recipient": "it@acme.example",
        "instructions": "Send the access review.",
        "due_on": "2030-01-31",
    }
    risk = {
        "title": "Stolen laptop",
        "asset": "Staff laptops",
        "threat": "Theft",
        "vulnerability": "No disk encryption",
        "likelihood": 3,
        "impact": 4,
        "owner": "user:owner@acme.example",
        "treatment": "modify",
    }
    run = api.start(headers, assessment, f"unstorable-run-{ord(bad)}").json()["id"]
    workflow = f"/api/v1/workflows/{run}"
    # (method, url, body or params, where the NUL is: the field's loc, and inside it)
    cases: list[tuple[str, str, dict[str, Any], list[str], str]] = [
        (
            "post",
            "/api/v1/assessments",
            {"organization_id": "org", "name": f"FY{bad}27"},
            ["body", "name"],
            "",
        ),
        (
            "post",
            "/api/v1/assessments",
            {"organization_id": f"o{bad}", "name": "x"},
            ["body", "organization_id"],
            "",
        ),
        (
            "post",
            f"/api/v1/assessments/{assessment}/workflows/lifecycle/start",
            {"trace_id": f"t{bad}"},
            ["body", "trace_id"],
            "",
        ),
        (
            "post",
            f"{workflow}/signals",
            {"type": "framework_selected", "payload": {"framework": f"SCF{bad}"}},
            ["body", "payload"],
            "at .framework",
        ),
        (
            "post",
            f"{workflow}/signals",
            {"type": "framework_selected", "payload": {"notes": [{f"k{bad}": 1}]}},
            ["body", "payload"],
            "at .notes[0]",
        ),
        (
            "post",
            f"{workflow}/signals",
            {"type": "framework_selected", "trace_id": f"{bad}", "payload": {"framework": "SCF"}},
            ["body", "trace_id"],
            "",
        ),
        ("post", f"{workflow}/cancel", {"reason": f"stop{bad}"}, ["body", "reason"], ""),
        ("post", f"{workflow}/block", {"reason": f"hold{bad}"}, ["body", "reason"], ""),
        (
            "post",
            f"{workflow}/approvals",
            {
                "artifact_kind": "soa",
                "artifact_version": 1,
                "decision": "rejected",
                "comment": f"no{bad}",
            },
            ["body", "comment"],
            "",
        ),
        (
            "get",
            f"/api/v1/assessments/{assessment}/kb/search",
            {"q": f"access{bad}"},
            ["query", "q"],
            "",
        ),
        ("get", "/api/v1/assessments", {"cursor": f"abc{bad}"}, ["query", "cursor"], ""),
        *(
            (
                "post",
                f"/api/v1/assessments/{assessment}/evidence-requests",
                {**evidence_request, field: value},
                ["body", *loc],
                "",
            )
            for field, value, loc in (
                ("instructions", f"Send{bad}", ["instructions"]),
                ("recipient", f"it{bad}@acme.example", ["recipient"]),
                ("requirements", ["SCF IAC-01", f"SCF{bad}"], ["requirements", 1]),
            )
        ),
        *(
            (
                "post",
                f"/api/v1/assessments/{assessment}/risks",
                {**risk, field: value},
                ["body", *loc],
                "",
            )
            for field, value, loc in (
                ("threat", f"Theft{bad}", ["threat"]),
                ("owner", f"user:{bad}", ["owner"]),
                ("controls", ["CRY-05", f"END{bad}"], ["controls", 1]),
            )
        ),
        (
            "put",
            f"/api/v1/assessments/{assessment}/documents/{document}/life",
            {"owner": f"user:{bad}"},
            ["body", "owner"],
            "",
        ),
        ("get", "/api/v1/evidence/queue", {"owner": f"user:{bad}"}, ["query", "owner"], ""),
    ]
    before = _rows()
    for method, url, data, loc, inside in cases:
        if method == "get":
            if bad != NUL:
                continue  # a lone surrogate has no UTF-8 form a URL could carry
            response = api.client.get(url, headers=headers, params=data)
        else:
            # json.dumps spells a lone surrogate as JSON's `\udxxx` escape, as a client may.
            sent = {**headers, "Content-Type": "application/json"}
            response = api.client.request(method, url, headers=sent, content=json.dumps(data))
        problem = _problem(response)
        assert problem["code"] == "validation_failed", (url, problem)
        [error] = problem["errors"]
        assert error["loc"] == loc and error["type"] in kinds, (url, problem)
        assert word in error["msg"].lower() and inside in error["msg"], (url, problem)

    if bad != NUL:
        assert _rows() == before, "nothing is stored"
        return
    # Clients percent-encode a NUL in a file name; a raw multipart body can still carry one.
    body = (
        b'--b0undary\r\nContent-Disposition: form-data; name="file"; '
        b'filename="policy\x00.md"\r\nContent-Type: text/markdown\r\n\r\n'
        b"# Policy\n\nText.\r\n--b0undary--\r\n"
    )
    upload = api.client.post(
        f"/api/v1/assessments/{assessment}/documents",
        content=body,
        headers={**headers, "Content-Type": "multipart/form-data; boundary=b0undary"},
    )
    problem = _problem(upload)
    assert (problem["code"], problem["errors"][0]["loc"]) == ("invalid_input", ["filename"])
    assert _rows() == before, "nothing is stored"
    assert api.client.get(workflow, headers=headers).json()["status"] == "pending"
