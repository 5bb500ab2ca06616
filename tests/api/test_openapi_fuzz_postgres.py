"""The API fuzzed from its own document on PostgreSQL: every check and phase on, the
stateful phase following the links, a fixed seed and a bounded budget. It finds nothing
but the business rules `orchestrator.testing.api_fuzz.BUSINESS_RULES` names.

`python -m bench.api_fuzz --seed N --minutes M` runs it longer with another seed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.service.apikeys import create_key
from orchestrator.testing.api_fuzz import run
from orchestrator.testing.reset import reset_process_state
from tests.support.embedded import LIFECYCLE_VARS

pytestmark = pytest.mark.integration

SEED = 53
#: Examples per operation and phase, and a ceiling in seconds: about a minute in CI.
EXAMPLES = 2
BUDGET_S = 90


@pytest.fixture
def pg_app(postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in LIFECYCLE_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LIFECYCLE_DATABASE_URL", postgres_url)
    monkeypatch.setenv("LIFECYCLE_HOME", str(tmp_path))
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    monkeypatch.setenv("LIFECYCLE_API_MAX_SIGNAL_WAIT_S", "0.05")  # no worker runs here
    reset_process_state()
    reset_settings()
    logging.getLogger("orchestrator.api.access").setLevel(logging.WARNING)
    yield
    reset_process_state()
    reset_settings()


def test_the_fuzzer_finds_nothing_but_named_business_rules(pg_app: None) -> None:
    _, key = create_key("fuzz", "user:fuzz@acme.example", ("admin",))
    report = run(
        app,
        app.openapi(),
        headers={"Authorization": f"Bearer {key}"},
        seed=SEED,
        max_examples=EXAMPLES,
        max_seconds=BUDGET_S,
    )
    print("\n".join(report.lines()))
    assert report.cases > 500
    assert {
        "POST /api/v1/assessments",
        "POST /api/v1/assessments/{assessmentId}/workflows/lifecycle/start",
        "POST /api/v1/workflows/{workflowRunId}/signals",
        "POST /api/v1/workflows/{workflowRunId}/approvals",
    } <= report.operations
    assert not report.failures, "\n".join(report.lines())
