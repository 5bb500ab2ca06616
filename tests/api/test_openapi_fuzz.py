"""Property-based requests generated from the OpenAPI schema: no answer is a 5xx, and
every answer matches the schema (status codes, content types, bodies).

Each operation gets valid and invalid requests, with random ids and with the ids of a
real assessment, run, signal and artifact, so the generated bodies reach the handlers.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from tests.api.conftest import Api, Headers


async def _without_lifespan(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The app, minus its lifespan: schemathesis keeps a lifespan open for the whole
    process, and the app's would start an embedded worker for every later test."""
    if scope["type"] != "lifespan":
        await app(scope, receive, send)
        return
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


SCHEMA = schemathesis.openapi.from_dict(copy.deepcopy(app.openapi()))  # it rewrites its input
SCHEMA.app = _without_lifespan
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]
EXAMPLES = 5
#: Readiness and the health report answer 503 by design while nothing consumes the queues
#: (no worker runs here); each is still held to its schema.
UNREADY_BY_DESIGN = {"/readyz", "/health"}


def _seed(api: Api, headers: Headers) -> dict[str, str]:
    assessment = api.create_assessment(headers)
    upload = api.upload(headers, assessment["id"], "a.md", b"# Access\n\nMFA everywhere.\n")
    run = api.start(headers, assessment["id"], "fuzz").json()
    signals = api.client.get(f"/api/v1/workflows/{run['id']}/signals", headers=headers)
    assert upload.status_code == 201
    return {
        "assessmentId": assessment["id"],
        "workflowRunId": run["id"],
        "signalId": signals.json()["items"][0]["signal_id"],
        "artifactId": "00000000-0000-4000-8000-000000000000",
    }


@pytest.fixture
def seeded(api: Api, monkeypatch: pytest.MonkeyPatch) -> tuple[Headers, dict[str, str]]:
    monkeypatch.setenv("LIFECYCLE_API_MAX_SIGNAL_WAIT_S", "0.05")  # no worker runs here
    reset_settings()
    headers = api.key()
    return headers, _seed(api, headers)


def _strategies(operation: Any, headers: Headers, ids: dict[str, str]) -> list[Any]:
    names = {p.name for p in operation.path_parameters}
    real = {name: value for name, value in ids.items() if name in names}
    strategies = []
    for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
        strategies.append(operation.as_strategy(mode, headers=headers))
        if real:
            strategies.append(operation.as_strategy(mode, headers=headers, path_parameters=real))
    return strategies


def test_generated_requests_never_get_a_server_error(
    seeded: tuple[Headers, dict[str, str]],
) -> None:
    headers, ids = seeded
    results = list(SCHEMA.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results), "every operation of the schema is valid"
    assert len(operations) >= 25
    for operation in operations:
        checks = CHECKS[1:] if operation.path in UNREADY_BY_DESIGN else CHECKS
        _fuzz(st.one_of(*_strategies(operation, headers, ids)), checks)


def _fuzz(strategy: Any, checks: list[Any]) -> None:
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        database=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def check(case: Any) -> None:
        case.call_and_validate(checks=checks)

    check()


SPEC_ENDPOINTS = {
    ("post", "/api/v1/assessments/{assessmentId}/workflows/lifecycle/start"),
    ("get", "/api/v1/assessments/{assessmentId}/workflows/lifecycle"),
    ("get", "/api/v1/workflows/{workflowRunId}"),
    ("post", "/api/v1/workflows/{workflowRunId}/cancel"),
    ("post", "/api/v1/workflows/{workflowRunId}/resume"),
    ("post", "/api/v1/workflows/{workflowRunId}/signals"),
}


def test_the_schema_names_the_spec_endpoints_and_their_errors() -> None:
    paths = app.openapi()["paths"]
    operations = {(method, path): op for path, ops in paths.items() for method, op in ops.items()}
    assert set(operations) >= SPEC_ENDPOINTS
    ids = [op["operationId"] for op in operations.values()]
    assert len(ids) == len(set(ids))
    for (_, path), op in operations.items():
        if not path.startswith("/api/v1/"):
            continue
        assert op["security"] == [{"ApiKey": []}], path
        for status in ("401", "403", "404", "422"):
            content = op["responses"][status]["content"]
            assert "application/problem+json" in content, (path, status)
