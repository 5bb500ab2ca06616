"""Driving a run through the HTTP API the way a reviewer's client would."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import APPROVAL_SIGNALS
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from tests.api.conftest import Api, Headers

SIGNAL_FOR_KIND = {kind.value: signal.value for signal, kind in APPROVAL_SIGNALS.items()}


def select_framework(api: Api, headers: Headers, run_id: str) -> dict[str, Any]:
    response = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": 10},
        headers={**headers, "Idempotency-Key": f"{run_id}:framework"},
        json={"type": "framework_selected", "payload": {"framework": "SCF"}},
    )
    assert response.status_code == 202, response.text
    return dict(response.json())


def approve_current(api: Api, reviewer: Headers, run: dict[str, Any]) -> dict[str, Any]:
    """Record an approval of the version waiting, then send the signal naming it."""
    kind = APPROVED_AT[Step(run["current_step"])].value
    version = int(run["context"]["artifacts"][kind])
    event = api.client.post(
        f"/api/v1/workflows/{run['id']}/approvals",
        headers=reviewer,
        json={
            "artifact_kind": kind,
            "artifact_version": version,
            "comment": f"{kind} v{version} reviewed",
        },
    )
    assert event.status_code == 201, event.text
    receipt = api.client.post(
        f"/api/v1/workflows/{run['id']}/signals",
        params={"wait": 10},
        headers={**reviewer, "Idempotency-Key": f"{run['id']}:{kind}:{version}"},
        json={"type": SIGNAL_FOR_KIND[kind], "approval_event_id": event.json()["id"]},
    )
    assert receipt.status_code == 202, receipt.text
    return dict(receipt.json())


def drive_to_completion(api: Api, owner: Headers, reviewer: Headers, run_id: str) -> dict[str, Any]:
    while True:
        run = api.follow(
            owner,
            run_id,
            lambda r: r["status"] in ("waiting_for_input", "waiting_for_approval", "completed"),
        )
        if run["status"] == "completed":
            return run
        if run["current_step"] == Step.WAIT_FOR_FRAMEWORK_SELECTION.value:
            assert select_framework(api, owner, run_id)["fate"] == "applied"
        else:
            assert run["status"] == "waiting_for_approval", run
            assert approve_current(api, reviewer, run)["fate"] == "applied"
