"""The API documents itself without the internet: /docs and /redoc load only assets the
app serves, and every problem's `type` URI is a page explaining its code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.api.problem_catalog import PROBLEMS
from orchestrator.contracts.errors import LifecycleError
from tests.api.conftest import Api

ROOT = Path(__file__).resolve().parents[2]
_REFERENCES = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*'([^']+)'""")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_load_only_assets_the_app_serves(api: Api, page: str) -> None:
    html = api.client.get(page)
    assert html.status_code == 200 and "text/html" in html.headers["content-type"]
    references = [a or b for a, b in _REFERENCES.findall(html.text)]
    assert any(r.endswith(".js") for r in references), references
    assert "http://" not in html.text and "https://" not in html.text, "nothing from a CDN"
    for reference in references:
        assert reference.startswith("/") and not reference.startswith("//"), reference
        served = api.client.get(reference)
        assert served.status_code == 200 and served.content, reference
    if page == "/docs":
        assert "/openapi.json" in references
        bundle = api.client.get("/docs-assets/swagger-ui-bundle.js").text
        assert "SwaggerUIBundle" in bundle and len(bundle) > 500_000, "the real Swagger UI"


def test_every_problem_the_api_answers_names_a_page_explaining_it(api: Api) -> None:
    reader = api.key("read")
    answers = [
        api.client.get("/api/v1/assessments"),
        api.client.get("/api/v1/assessments", headers={"Authorization": "Bearer lk_x.y"}),
        api.client.post("/api/v1/assessments", headers=reader, json={}),
        api.client.get(f"/api/v1/workflows/{'0' * 8}-0000-4000-8000-{'0' * 12}", headers=reader),
        api.client.post("/api/v1/assessments", headers=api.key("signal"), json={"x": 1}),
        api.client.delete("/api/v1/assessments", headers=reader),
        api.client.post(
            "/api/v1/assessments",
            headers={**api.key("signal"), "Idempotency-Key": " "},
            json={"organization_id": "o", "name": "n"},
        ),
    ]
    codes = set()
    for answer in answers:
        problem = answer.json()
        assert answer.headers["content-type"] == "application/problem+json", answer.text
        assert problem["type"] == f"/problems/{problem['code']}"
        page = api.client.get(problem["type"])
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        explained = PROBLEMS[problem["code"]]
        assert f"<code>{problem['code']}</code>" in page.text
        assert f"HTTP {explained.status}" in page.text and explained.title in page.text
        codes.add(problem["code"])
    assert codes == {
        "unauthenticated",
        "invalid_api_key",
        "insufficient_scope",
        "not_found",
        "validation_failed",
        "method_not_allowed",
        "invalid_idempotency_key",
    }
    listing = api.client.get("/problems")
    assert listing.status_code == 200
    assert all(f'href="/problems/{code}"' in listing.text for code in PROBLEMS)
    unknown = api.client.get("/problems/no_such_code")
    assert (unknown.status_code, unknown.json()["code"]) == (404, "not_found")


def _codes_in_sources() -> set[str]:
    """Every code the sources can answer: API-level problems, the status fallbacks and the
    fleet's own errors."""
    found: set[str] = set()
    calls = re.compile(
        r"""(?:ApiProblem|problem_response)\(\s*(?:[\w.]+,\s*)?\d{3},\s*"""
        r"""["']([a-z_]+)["']"""
    )
    for path in [*ROOT.glob("orchestrator/**/*.py"), *ROOT.glob("workers/**/*.py")]:
        found |= set(calls.findall(path.read_text()))
    from orchestrator.api.problems import _STATUS_CODES

    found |= set(_STATUS_CODES.values()) | {"http_error"}
    pending: list[type[LifecycleError]] = [LifecycleError]
    while pending:
        error = pending.pop()
        found.add(error.code)
        pending.extend(error.__subclasses__())
    return found


def test_every_code_the_sources_can_answer_is_explained() -> None:
    found = _codes_in_sources()
    assert {
        "unauthenticated",
        "document_too_large",
        "role_not_held",
        "signal_rejected",
        "payload_too_large",
    } <= found, "the scan finds codes of every kind"
    assert found - set(PROBLEMS) == set(), "explain these in orchestrator/api/problem_catalog.py"
    for problem in PROBLEMS.values():
        assert 400 <= problem.status <= 599 and problem.meaning and problem.remedy
