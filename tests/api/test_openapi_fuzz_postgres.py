"""The API fuzzed from its own document on PostgreSQL: every check and phase on, the
stateful phase following the links, a fixed seed and a number of examples (not a time
budget, so what it tries does not depend on the machine's speed). It finds nothing but the
business rules `orchestrator.testing.api_fuzz.BUSINESS_RULES` names.

`python -m bench.api_fuzz --seed N --minutes M` runs it longer with another seed.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.api import app
from orchestrator.service.apikeys import create_key
from orchestrator.testing.api_fuzz import FuzzReport, run
from tests.support.embedded import api_on_postgres

pytestmark = pytest.mark.integration

SEED = 7
#: Examples per operation in the examples, coverage and fuzzing phases, and scenarios of
#: the stateful phase: about a minute and a half on 2 cores.
EXAMPLES = 2
SCENARIOS = 40


_ASSESSMENTS = "POST /api/v1/assessments"
_START = "POST /api/v1/assessments/{assessmentId}/workflows/lifecycle/start"
CREATION_TO_START = {
    f"GET /api/v1/assessments -> [200] next_period -> {_ASSESSMENTS}",
    f"{_ASSESSMENTS} -> [201] upload_document -> {_ASSESSMENTS}/{{assessmentId}}/documents",
    f"{_ASSESSMENTS} -> [201] start_lifecycle -> {_START}",
}
#: Which of the start's links a scenario takes next depends on what the API answered
#: before (ids, today's date against generated dates), so the test asks for some, not for
#: one by name; `bench.api_fuzz` runs longer, and its runs followed each of them.
START_LINKS_AT_LEAST = 3


@pytest.fixture
def pg_app(postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    no_worker = {"LIFECYCLE_API_MAX_SIGNAL_WAIT_S": "0.05"}  # no worker runs here
    with api_on_postgres(monkeypatch, tmp_path, postgres_url, **no_worker):
        # Thousands of access lines, kept off the output but still seen by the 5xx check
        # (tests/support/server_errors.py), which a higher level would silence.
        monkeypatch.setattr(logging.getLogger("orchestrator.api.access"), "propagate", False)
        yield


@pytest.mark.allows_server_error(
    reason="no worker consumes here: readiness and the health report answer 503 by design",
    paths=("/readyz", "/health"),
)
def test_the_fuzzer_finds_nothing_but_named_business_rules(pg_app: None) -> None:
    _, key = create_key("fuzz", "user:fuzz@acme.example", ("admin",))
    headers = {"Authorization": f"Bearer {key}"}
    report = run(
        app,
        app.openapi(),
        headers=headers,
        seed=SEED,
        max_examples=EXAMPLES,
        phases=("examples", "coverage", "fuzzing"),
    )
    stateful = run(
        app, app.openapi(), headers=headers, seed=SEED, max_examples=SCENARIOS, phases=("stateful",)
    )
    report = _merged(report, stateful)
    print("\n".join(report.lines()))
    assert report.cases > 500
    assert {
        "POST /api/v1/assessments",
        "POST /api/v1/assessments/{assessmentId}/workflows/lifecycle/start",
        "POST /api/v1/workflows/{workflowRunId}/signals",
        "POST /api/v1/workflows/{workflowRunId}/approvals",
    } <= report.operations
    assert not report.failures, "\n".join(report.lines())
    # The stateful phase went from an assessment's creation to its run's operations along
    # the document's links.
    assert report.links_followed >= CREATION_TO_START, "\n".join(report.lines())
    from_start = [link for link in report.links_followed if link.startswith(f"{_START} ->")]
    assert len(from_start) >= START_LINKS_AT_LEAST, "\n".join(report.lines())


def _merged(one: FuzzReport, other: FuzzReport) -> FuzzReport:
    merged = FuzzReport(
        cases=one.cases + other.cases,
        failures=one.failures + other.failures,
        excused=one.excused + other.excused,
        operations=one.operations | other.operations,
        links_followed=one.links_followed | other.links_followed,
        links_answered=one.links_answered | other.links_answered,
    )
    for report in (one, other):
        for code, samples in report.excused_samples.items():
            merged.excused_samples.setdefault(code, set()).update(samples)
        for name, found in report.samples.items():
            merged.samples.setdefault(name, []).extend(found)
    return merged
