"""Webhooks of run transitions and approval requests, delivered by the real worker on the
embedded default: each once, signed, with the gate, the version and a console link."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from fastapi.testclient import TestClient

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.documents import upload_document
from orchestrator.notifications import signing
from orchestrator.notifications.subscriptions import subscribe
from orchestrator.operations import cancel_run
from orchestrator.producer import Actor, create_assessment, get_run, start_lifecycle
from orchestrator.reviewer import ScriptedReviewer, drive
from tests.console.kit import SAMPLES, wait_for
from tests.sweeps.receiver import webhook_receiver

OWNER = Actor(tenant_id="acme", actor_id="user:owner@acme")
REVIEWER = Actor(tenant_id="acme", actor_id="user:rev@acme")
SECRET = "s" * 32


def _documents(received: list) -> list[dict]:
    for post in received:
        signing.verify(SECRET, post.headers[signing.SIGNATURE_HEADER], post.body)
    return [json.loads(post.body) for post in received]


def _arrived(received: list, run_id: object) -> set[tuple[str, int]]:
    counts = Counter(d["type"] for d in _documents(received) if d["run_id"] == str(run_id))
    return set(counts.items())


def test_every_transition_is_told_once_and_approval_requests_link_the_console(
        running: TestClient, monkeypatch: pytest.MonkeyPatch) -> None:
    with webhook_receiver() as receiver:
        subscribe(OWNER, receiver.url, secret=SECRET)
        assessment = create_assessment(OWNER, "acme-org", "Webhooks")
        for path in sorted(SAMPLES.iterdir()):
            upload_document(OWNER, assessment.id, path.name, path.read_bytes())
        run = start_lifecycle(OWNER, assessment.id, "webhooks-1")
        done = drive(ScriptedReviewer(REVIEWER, say=lambda _: None), run.id, 120)
        assert done.status == "completed"
        # Deliveries run concurrently and arrive in any order: wait for the last of each.
        wait_for(lambda: _arrived(receiver.received, run.id) >= {
            ("run.completed", 1), ("approval.requested", 5), ("run.step_started", 20),
            ("run.step_completed", 20), ("run.waiting", 7)}, "the run's events delivered")
        events = [d for d in _documents(receiver.received) if d["run_id"] == str(run.id)]

        ids = [d["id"] for d in events]
        assert len(ids) == len(set(ids)), "each event once"
        types = Counter(d["type"] for d in events)
        assert types["run.step_started"] == types["run.step_completed"] == 20
        assert types["run.completed"] == 1 and types["approval.requested"] == 5
        waits = [d["data"]["step"] for d in events if d["type"] == "run.waiting"]
        # Deliveries run concurrently: receivers get them in any order.
        assert sorted(waits) == sorted(["wait_for_documents", "wait_for_framework_selection",
                         "wait_for_soa_approval", "wait_for_gap_approval",
                         "wait_for_maturity_approval", "wait_for_poam_approval",
                         "wait_for_report_approval"])
        requested = [d["data"] for d in events if d["type"] == "approval.requested"]
        assert sorted((r["gate"], r["version"]) for r in requested) == [
            ("gap_analysis", 1), ("maturity_assessment", 1), ("poam", 1), ("report", 1),
            ("soa", 1)]
        [soa] = [r for r in requested if r["gate"] == "soa"]
        assert soa["console_url"] == (
            f"http://127.0.0.1:8000/console/runs/{run.id}/artifacts/soa?version=1")
        started = {d["data"]["step"] for d in events if d["type"] == "run.step_started"}
        assert started == {step.value for step in Step}

        second = create_assessment(OWNER, "acme-org", "Cancelled")
        cancelled = start_lifecycle(OWNER, second.id, "webhooks-2")
        wait_for(lambda: get_run(OWNER, cancelled.id).status == "waiting_for_input",
                 "the run to wait for documents")
        cancel_run(OWNER, cancelled.id, reason="not needed", idempotency_key="cancel-1")
        wait_for(lambda: "run.cancelled" in {
            d["type"] for d in _documents(receiver.received)}, "the cancellation told")
    told = Counter((d["run_id"], d["type"]) for d in _documents(receiver.received))
    assert told[(str(cancelled.id), "run.cancelled")] == 1

