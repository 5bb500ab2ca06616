"""A running step's "running for" counts on in a real browser between two redraws: the
live part answers 204 while nothing changes (a job no worker takes), and the counter must
not freeze at the time the server printed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from orchestrator.engine.coordinator import coordinate
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import Actor, create_assessment, get_run, start_lifecycle
from tests.console.browser import (
    console_browser,
    require_browser,
)
from tests.console.kit import SAMPLES, _no_kick, key

pytestmark = pytest.mark.browser

TENANT = "counter-co"
OWNER = Actor(tenant_id=TENANT, actor_id="user:owner@counter.example")


def _seconds(shown: str) -> float:
    number, unit = re.fullmatch(r"([0-9.]+) (ms|s|min|h)", shown.strip()).groups()  # type: ignore[union-attr]
    return float(number) * {"ms": 0.001, "s": 1, "min": 60, "h": 3600}[unit]


def test_the_running_counter_ticks_while_the_server_has_nothing_new(embedded: Path) -> None:
    require_browser()
    assessment = create_assessment(OWNER, "counter-org", "Counter Corp")
    sample = sorted(SAMPLES.iterdir())[0]
    upload_document(OWNER, assessment.id, sample.name, sample.read_bytes(), kick=_no_kick)
    run = start_lifecycle(OWNER, assessment.id, "counter", kick=_no_kick)
    coordinate(run.id)  # ingestion running: its job queued where no worker takes it
    assert get_run(OWNER, run.id).current_step == "ingest_documents"
    owner_key = key("read", tenant=TENANT, principal=OWNER.actor_id)
    server = {"LIFECYCLE_API_EMBEDDED_WORKER": "false"}
    with console_browser(embedded, "running-counter", server) as pages:
        pages.sign_in(owner_key)
        pages.open(f"/console/runs/{run.id}")
        counter = "time[data-running-s]"
        printed = float(
            pages.wait(lambda: pages.find(counter), "the counter").get_attribute("data-running-s")
        )
        # Two seconds past what the server printed, on the same element: counted here.
        pages.wait(
            lambda: _seconds(pages.find(counter).text) >= printed + 2,
            "the counter to count on",
            timeout_s=30,
        )
        assert float(pages.find(counter).get_attribute("data-running-s")) == printed
        assert "running for" in pages.text()
        pages.shot("running-counter")
