"""The OpenAPI document states the rules the server enforces, and HTTP's own: `Allow` on
405 lists every method of the path, `OPTIONS` answers 204 with it."""

from __future__ import annotations

import re

import pytest

from orchestrator.api import app
from orchestrator.api.field_kinds import CURSOR_PATTERN, IDEMPOTENCY_KEY_PATTERN
from orchestrator.api.idempotency import check_key
from orchestrator.api.openapi_document import EXAMPLES, LINKS
from orchestrator.api.problems import ApiProblem
from orchestrator.api.routers.amendments import RowAmendment
from orchestrator.contracts.text import NOT_BLANK, NUL_FREE_PATTERN
from tests.api.conftest import Api

DOCUMENT = app.openapi()
OPERATIONS = {op["operationId"]: op for ops in DOCUMENT["paths"].values() for op in ops.values()}


def _methods(header: str) -> set[str]:
    return {method.strip() for method in header.split(",")}


def test_options_answers_204_with_every_method_of_the_path(api: Api) -> None:
    answer = api.client.options("/api/v1/assessments")
    assert answer.status_code == 204 and answer.content == b""
    assert _methods(answer.headers["allow"]) == {"GET", "POST", "OPTIONS"}
    run = api.client.options("/api/v1/workflows/00000000-0000-4000-8000-000000000000/signals")
    assert _methods(run.headers["allow"]) == {"GET", "POST", "OPTIONS"}
    assert api.client.options("/api/v1/no-such-path").status_code == 404


def test_a_405_names_every_method_the_path_serves(api: Api) -> None:
    answer = api.client.delete("/api/v1/assessments", headers=api.key())
    assert answer.status_code == 405
    assert answer.headers["content-type"] == "application/problem+json"
    assert _methods(answer.headers["allow"]) == {"GET", "POST", "OPTIONS"}


@pytest.mark.parametrize(
    ("key", "valid"),
    [
        ("acme-2027", True),
        ("a", True),
        ("x" * 256, True),
        ("x" * 257, False),
        (" ", False),
        ("a\tb", False),
        ("café", False),
        ("a\x00", False),
    ],
)
def test_the_idempotency_key_rule_is_the_documented_pattern(key: str, valid: bool) -> None:
    documented = re.fullmatch(IDEMPOTENCY_KEY_PATTERN, key) is not None
    try:
        check_key(key)
        checked = True
    except ApiProblem:
        checked = False
    assert documented == checked == valid


def _parameter(operation_id: str, name: str) -> dict[str, object]:
    (parameter,) = [p for p in OPERATIONS[operation_id]["parameters"] if p["name"] == name]
    schema = parameter["schema"]
    assert isinstance(schema, dict)
    return schema


def test_the_document_states_keys_cursors_text_and_selectors() -> None:
    for operation_id in ("assessments_create", "lifecycle_signal", "amendments_amend"):
        assert _parameter(operation_id, "Idempotency-Key")["pattern"] == IDEMPOTENCY_KEY_PATTERN
    cursor = _parameter("assessments_index", "cursor")
    assert (cursor["pattern"], cursor["format"]) == (CURSOR_PATTERN, "cursor")
    schemas = DOCUMENT["components"]["schemas"]
    not_blank = schemas["CreateAssessment"]["properties"]["name"]["pattern"]
    assert re.fullmatch(not_blank, "a b") and not re.fullmatch(not_blank, " \x00")
    assert schemas["ControlRequest"]["properties"]["reason"]["pattern"] == not_blank
    assert schemas["SignalRequest"]["properties"]["trace_id"]["anyOf"][0]["pattern"] == (
        NUL_FREE_PATTERN
    )
    assert schemas["RowChanges"]["properties"]["target_date"]["anyOf"][0]["pattern"] == (
        r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"
    )
    assert len(schemas["RowAmendment"]["allOf"][0]["oneOf"]) == 3
    evidence = schemas["NewEvidenceRequest"]["properties"]["due_on"]
    assert evidence["format"] == "date"


def test_every_error_answer_is_a_problem_with_its_types() -> None:
    for ops in DOCUMENT["paths"].values():
        for op in ops.values():
            for status, response in op["responses"].items():
                if status.startswith("4"):
                    assert list(response["content"]) == ["application/problem+json"], status
                    assert "/problems/" in response["description"]
    page = OPERATIONS["public_entry_page"]["responses"]["422"]
    assert list(page["content"]) == ["application/problem+json"]


def test_creations_link_to_what_takes_their_ids() -> None:
    for source, (status, links) in LINKS.items():
        documented = OPERATIONS[source]["responses"][status]["links"]
        assert set(documented) == set(links)
        for link in documented.values():
            assert link["operationId"] in OPERATIONS
    started = OPERATIONS["lifecycle_start"]["responses"]["201"]["links"]
    assert {link["operationId"] for link in started.values()} >= {
        "lifecycle_signal",
        "approvals_record",
        "artifacts_index",
        "runs_audit",
    }


def test_the_examples_are_requests_the_server_takes() -> None:
    for operation_id in EXAMPLES:
        content = OPERATIONS[operation_id]["requestBody"]["content"]["application/json"]
        assert content["example"] == EXAMPLES[operation_id]
    RowAmendment.model_validate(EXAMPLES["amendments_amend"]["rows"][0])


def test_rules_no_schema_states_answer_problem_types_of_their_own(api: Api) -> None:
    headers = api.key()
    assessment = api.create_assessment(headers)["id"]
    past = api.client.post(
        f"/api/v1/assessments/{assessment}/evidence-requests",
        headers=headers,
        json={
            "requirements": ["SOC 2 CC6.1"],
            "recipient": "it-ops@acme.example",
            "instructions": "The MFA policy, please.",
            "due_on": "2000-01-31",
        },
    )
    assert (past.status_code, past.json()["code"]) == (422, "date_in_past")
    foreign = api.client.get("/api/v1/assessments", headers=headers, params={"cursor": "abc"})
    assert (foreign.status_code, foreign.json()["code"]) == (422, "invalid_cursor")
    reopen = api.client.get(
        f"/api/v1/assessments/{assessment}/catalogue-diff", headers=headers, params={"to": "x"}
    )
    assert (reopen.status_code, reopen.json()["code"]) == (409, "nothing_to_reopen")
    elsewhere = api.client.post(
        "/api/v1/assessments",
        headers=headers,
        json={"organization_id": "other-org", "name": "2028", "carry_over_from": assessment},
    )
    assert (elsewhere.status_code, elsewhere.json()["code"]) == (422, "carry_over_refused")
    unclaimable = api.client.post(
        f"/api/v1/workflows/{api.start(headers, assessment, 'k').json()['id']}/reviews/soa/claim",
        headers=headers,
    )
    assert (unclaimable.status_code, unclaimable.json()["code"]) == (409, "gate_not_waiting")
    image = api.upload(headers, assessment, "logo.png", b"\x89PNG\r\n\x1a\n" + b"\x00" * 64)
    assert (image.status_code, image.json()["code"]) == (422, "document_refused")
    far = api.client.post(
        f"/api/v1/assessments/{assessment}/evidence-requests",
        headers=headers,
        json={
            "requirements": ["SOC 2 CC6.1"],
            "recipient": "it-ops@acme.example",
            "instructions": "The MFA policy, please.",
            "due_on": "9999-12-31",
        },
    )
    assert far.status_code == 201, far.text
    listed = api.client.get(f"/api/v1/assessments/{assessment}/evidence-requests", headers=headers)
    assert listed.json()[0]["link_expires_at"].endswith("Z")


def test_cross_field_rules_are_in_the_schema() -> None:
    schemas = DOCUMENT["components"]["schemas"]
    judgement = schemas["JudgementAmendment"]["allOf"][0]["anyOf"]
    assert [branch["required"] for branch in judgement] == [
        ["kind"],
        ["adoption"],
    ]
    resolve = schemas["ResolveRequest"]["allOf"][0]["anyOf"]
    assert [branch["required"] for branch in resolve] == [
        ["evidence_ref"],
        ["comment"],
    ]
    start = schemas["StartLifecycle"]["allOf"][0]["oneOf"]
    assert start[0]["properties"]["origin"] == {
        "not": {"enum": ["schedule", "reassessment", "retry", "replay"]}
    }
    assert {branch["properties"]["origin"]["const"] for branch in start[1:]} == {
        "schedule",
        "reassessment",
        "retry",
        "replay",
    }


def test_not_blank_is_whatever_the_server_does_not_strip(api: Api) -> None:
    # `\s` means other sets in ECMA, Rust and Python regexes: the pattern spells it out.
    for point in range(1, 0x110000):
        char = chr(point)
        assert bool(re.search(NOT_BLANK, char)) is not char.isspace(), hex(point)
    headers = api.key()
    run = api.start(headers, api.create_assessment(headers)["id"], "k").json()["id"]
    blank = api.client.post(
        f"/api/v1/workflows/{run}/cancel", headers=headers, json={"reason": "\x1c\u3000"}
    )
    assert (blank.status_code, blank.json()["code"]) == (422, "validation_failed")


def _patterns(node: object) -> list[str]:
    if isinstance(node, dict):
        found = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        return found + [p for value in node.values() for p in _patterns(value)]
    if isinstance(node, list):
        return [p for item in node for p in _patterns(item)]
    return []


def test_no_pattern_uses_a_class_whose_meaning_depends_on_the_regex_dialect() -> None:
    # `\s`, `\w`, `\d` and `\b` mean other sets in ECMA (what clients and fuzzers read the
    # document with), Rust (pydantic) and Python: a value one side takes, the other refuses.
    patterns = set(_patterns(DOCUMENT))
    assert NOT_BLANK in "".join(patterns)  # the walk reaches the schemas' patterns
    dialectal = {p for p in patterns if re.search(r"(?<!\\)\\[sSwWdDbB]", p)}
    assert not dialectal, dialectal
