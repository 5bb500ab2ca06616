"""Operator commands over HTTP: retry a failed step, reprocess a step, a new version."""

from __future__ import annotations

import uuid
from typing import Any

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import SignalType
from orchestrator.service.producer import record_signal
from tests.api.conftest import Api, Headers, waiting_at
from tests.support.http_lifecycle import select_framework


def _code(response: Any) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json", response.text
    return response.status_code, response.json()["code"]


#: For tests about who may act on which version: the SoA gate asks for no rows decided first
#: (tests/api/test_gate_readiness_http.py covers that).
NO_DECISIONS_ASKED = {"approval_policies": {"soa": {"require_decided": False}}}


def _run_to_framework(api: Api, owner: Headers) -> str:
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    run_id = str(api.start(owner, assessment["id"], "s", NO_DECISIONS_ASKED).json()["id"])
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    return run_id


def test_retry_runs_the_failed_step_again(running_api: Api) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant="tenant-retry")
    operator = api.key("operate", "read", tenant="tenant-retry", principal="user:ops@acme")
    run_id = _run_to_framework(api, owner)
    # As a run recorded it before frameworks were checked at the door: the scope step
    # still refuses it, and no retry can help.
    record_signal(
        Actor(tenant_id="tenant-retry", actor_id="user:owner@acme"),
        uuid.UUID(run_id),
        SignalType.FRAMEWORK_SELECTED,
        "nope",
        payload={"framework": "NOPE-1"},
    )
    failed = api.follow(owner, run_id, lambda r: r["status"] == "failed")
    assert failed["current_step"] == "create_scope" and "unknown_framework" in failed["reason"]

    url = f"/api/v1/workflows/{run_id}/retry"
    assert _code(api.client.post(url, headers=operator, json={})) == (422, "validation_failed")
    assert _code(api.client.post(url, headers=owner, json={"reason": "x"})) == (
        403,
        "insufficient_scope",
    )
    retried = api.client.post(
        url,
        params={"wait": 10},
        headers=operator,
        json={"reason": "the catalog was fixed", "idempotency_key": "r1"},
    )
    assert retried.status_code == 202, retried.text
    assert retried.json()["fate"] == "applied"
    api.follow(
        owner, run_id, lambda r: r["status"] == "failed" and len(_attempts(api, owner, run_id)) == 2
    )
    assert _attempts(api, owner, run_id) == [(1, "failed"), (2, "failed")]
    jobs = api.client.get(f"/api/v1/workflows/{run_id}/jobs", headers=owner).json()
    scope_jobs = [job for job in jobs if job["step"] == "create_scope"]
    assert [(j["step_attempt"], j["status"], j["error"]["code"]) for j in scope_jobs] == [
        (1, "failed", "unknown_framework"),
        (2, "failed", "unknown_framework"),
    ]


def _attempts(api: Api, headers: Headers, run_id: str) -> list[tuple[int, str]]:
    steps = api.client.get(f"/api/v1/workflows/{run_id}/steps", headers=headers).json()
    return [(s["attempt"], s["status"]) for s in steps if s["step"] == "create_scope"]


def test_reprocess_and_new_version_draft_new_artifact_versions(running_api: Api) -> None:
    api = running_api
    tenant = "tenant-reprocess"
    owner = api.key("signal", "read", tenant=tenant)
    operator = api.key("operate", "read", tenant=tenant, principal="user:ops@acme")
    reviewer = api.key(
        "approve", "read", tenant=tenant, principal="user:reviewer@acme", roles=("assessor",)
    )
    run_id = _run_to_framework(api, owner)
    select_framework(api, owner, run_id)
    api.follow(owner, run_id, waiting_at("wait_for_soa_approval"))
    base = f"/api/v1/workflows/{run_id}"
    for params, expected in (
        ({"waiting_for_approval": True}, [run_id]),
        ({"step": "wait_for_soa_approval"}, [run_id]),
        ({"status": "waiting_for_approval"}, [run_id]),
        ({"step": "create_scope"}, []),
        ({"waiting_for_approval": False}, []),
    ):
        listed = api.client.get("/api/v1/workflows", headers=owner, params=params).json()
        assert [r["id"] for r in listed["items"]] == expected, params

    plan = api.client.post(
        f"{base}/steps/create_soa_draft/reprocess",
        headers=operator,
        json={"reason": "new inventory", "new_version": True, "dry_run": True},
    )
    assert plan.status_code == 200, plan.text
    assert plan.json()["target"] == "create_soa_draft"
    assert {"kind": "soa", "version": 1} in plan.json()["superseded_artifacts"]
    unchanged = api.run(owner, run_id)["context"]["artifacts"]["soa"]
    assert unchanged == 1, "a dry run changes nothing"
    unknown = api.client.post(
        f"{base}/steps/make_coffee/reprocess",
        headers=operator,
        json={"reason": "x", "new_version": True},
    )
    assert _code(unknown) == (422, "validation_failed")
    ahead = api.client.post(
        f"{base}/steps/create_report/reprocess",
        headers=operator,
        json={"reason": "x", "new_version": True},
    )
    assert _code(ahead) == (422, "signal_rejected")
    assert "not reached" in ahead.json()["detail"] and ahead.json()["signal_id"]

    reprocessed = api.client.post(
        f"{base}/steps/create_soa_draft/reprocess",
        params={"wait": 10},
        headers=operator,
        json={"reason": "new inventory", "new_version": True},
    )
    assert (reprocessed.status_code, reprocessed.json()["fate"]) == (202, "applied")
    api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"].get("soa") == 2 and r["status"] == "waiting_for_approval"
        ),
    )

    sent_back = api.client.post(
        f"{base}/approvals",
        headers=reviewer,
        json={
            "artifact_kind": "soa",
            "artifact_version": 2,
            "decision": "changes_requested",
            "comment": "exclude physical security",
        },
    )
    assert sent_back.status_code == 201, sent_back.text
    api.follow(owner, run_id, waiting_at("wait_for_soa_approval", "waiting_for_input"))
    bad_kind = api.client.post(
        f"{base}/new-version", headers=operator, json={"artifact_kind": "novel", "reason": "x"}
    )
    assert _code(bad_kind) == (422, "validation_failed")
    revised = api.client.post(
        f"{base}/new-version",
        params={"wait": 10},
        headers=operator,
        json={"artifact_kind": "soa", "reason": "apply the comments"},
    )
    assert (revised.status_code, revised.json()["fate"]) == (202, "applied")
    api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"].get("soa") == 3 and r["status"] == "waiting_for_approval"
        ),
    )
    soa = api.client.get(f"{base}/artifacts", headers=owner, params={"kind": "soa"}).json()
    assert [(a["version"], a["status"]) for a in soa] == [
        (1, "superseded"),
        (2, "superseded"),
        (3, "draft"),
    ]
