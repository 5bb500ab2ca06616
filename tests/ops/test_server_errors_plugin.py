"""The access-log check of the integration tier (tests/support/server_errors.py), run on a
small app answering through the API's own middlewares: a 5xx fails the integration test
that produced it, naming the request; a test that provokes one says so with a reason;
unit tests are not watched; without the plugin the same test passes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.server_errors import surface_of

ROOT = Path(__file__).resolve().parents[2]

SUITE = """
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from orchestrator.api.unexpected import UnexpectedErrorMiddleware
from orchestrator.observability.asgi import TraceContextMiddleware

app = FastAPI()
app.add_middleware(UnexpectedErrorMiddleware)
app.add_middleware(TraceContextMiddleware)


@app.get("/api/v1/boom")
def boom() -> None:
    raise RuntimeError("a bug")


@app.get("/console/fine")
def fine() -> dict[str, bool]:
    return {"ok": True}


client = TestClient(app)


@pytest.mark.integration
def test_boom():
    assert client.get("/console/fine").status_code == 200
    assert client.get("/api/v1/boom").status_code == 500


@pytest.mark.integration
@pytest.mark.allows_server_error(reason="the bug is the subject", paths=("/api/v1/boom",))
def test_boom_allowed():
    assert client.get("/api/v1/boom").status_code == 500


@pytest.mark.integration
@pytest.mark.allows_server_error(reason="readiness answers 503 here", paths=("/readyz",))
def test_boom_elsewhere():
    assert client.get("/api/v1/boom").status_code == 500


@pytest.mark.integration
@pytest.mark.allows_server_error(paths=("/api/v1/boom",))
def test_no_reason():
    assert client.get("/api/v1/boom").status_code == 500


def test_boom_in_a_unit_test():
    assert client.get("/api/v1/boom").status_code == 500


@pytest.mark.integration
def test_fine():
    assert client.get("/console/fine").status_code == 200
"""


@pytest.fixture
def suite(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    pytester.makeini("[pytest]\nmarkers =\n    integration: real services\n")
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def test_a_5xx_fails_the_integration_test_that_caused_it(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-p", "tests.support.server_errors", "-rA")
    result.assert_outcomes(passed=3, failed=2, errors=1)
    result.stdout.fnmatch_lines(
        [
            "ERROR test_suite.py::test_no_reason - *allows_server_error needs a re*",
            "FAILED test_suite.py::test_boom - *",
            "FAILED test_suite.py::test_boom_elsewhere - *",
        ]
    )
    named = "the API answered 1 server error(s): GET /api/v1/boom 500"
    assert result.stdout.str().count(named) >= 2, "each failure names the request"
    result.stdout.fnmatch_lines(
        [
            "*requests in the API's access log (integration tests)*",
            "api * 3 requests, 3 answered 5xx (1 allowed by a marker)",
            "console * 2 requests, 0 answered 5xx (0 allowed by a marker)",
        ]
    )
    assert "PASSED test_suite.py::test_boom_allowed" in result.stdout.str()


def test_without_the_plugin_the_same_5xx_passes(suite: pytest.Pytester) -> None:
    result = suite.runpytest_subprocess("-k", "test_boom and not allowed and not elsewhere")
    result.assert_outcomes(passed=2)


def test_requests_are_counted_by_surface() -> None:
    assert surface_of("/api/v1/workflows") == "api"
    assert surface_of("/console/runs/x") == "console"
    assert surface_of("/w/evidence/abc") == "public link"
    assert surface_of("/readyz") == "operations"
    assert surface_of("/problems/not_found") == "documentation"
