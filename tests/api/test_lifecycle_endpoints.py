"""The spec's six endpoints: start, read, cancel, resume, signals — and how they refuse."""

from __future__ import annotations

import uuid
from typing import Any

from tests.api.conftest import Api, Headers


def _problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/problem+json"
    body = dict(response.json())
    assert body["code"] == code and body["status"] == status
    assert body["type"] == f"/problems/{code}" and body["title"]
    return body


def _started(api: Api, headers: Headers, key: str = "start-1") -> tuple[str, str]:
    assessment = api.create_assessment(headers)
    response = api.start(headers, assessment["id"], key)
    assert response.status_code == 201, response.text
    return assessment["id"], response.json()["id"]


def _signal(
    api: Api,
    headers: Headers,
    run_id: str,
    body: dict[str, Any],
    key: str | None = None,
    wait: float = 0,
) -> Any:
    extra = {"Idempotency-Key": key} if key else {}
    return api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": wait},
        headers={**headers, **extra},
        json=body,
    )


def test_start_refuses_a_second_run_a_reused_key_and_unknown_assessments(api: Api) -> None:
    admin = api.key()
    assessment_id, run_id = _started(api, admin)
    assert api.run(admin, run_id)["status"] == "pending"

    _problem(api.start(admin, assessment_id, "start-2"), 409, "active_run_exists")
    other = api.create_assessment(admin, name="another")
    conflict = _problem(api.start(admin, other["id"], "start-1"), 409, "idempotency_conflict")
    assert conflict["run_id"] == run_id
    _problem(api.start(admin, str(uuid.uuid4()), "start-3"), 404, "not_found")
    mismatch = api.client.post(
        f"/api/v1/assessments/{other['id']}/workflows/lifecycle/start",
        headers={**admin, "Idempotency-Key": "a"},
        json={"idempotency_key": "b"},
    )
    _problem(mismatch, 422, "idempotency_key_mismatch")
    policy = api.start(
        admin,
        other["id"],
        "start-4",
        body={
            "approval_policies": {"soa": {"mode": "n_of_m", "approvers": ["user:a"], "required": 2}}
        },
    )
    _problem(policy, 422, "approval_policy_refused")
    assert (
        api.client.get(
            f"/api/v1/assessments/{other['id']}/workflows/lifecycle", headers=admin
        ).status_code
        == 404
    )


def test_reading_runs_refuses_unknown_and_malformed_ids(api: Api) -> None:
    admin = api.key()
    _problem(api.client.get(f"/api/v1/workflows/{uuid.uuid4()}", headers=admin), 404, "not_found")
    malformed = _problem(
        api.client.get("/api/v1/workflows/not-a-uuid", headers=admin), 422, "validation_failed"
    )
    assert malformed["errors"][0]["loc"] == ["path", "workflowRunId"]
    _problem(api.client.get("/api/v1/nowhere", headers=admin), 404, "not_found")
    _problem(
        api.client.delete(f"/api/v1/workflows/{uuid.uuid4()}", headers=admin),
        405,
        "method_not_allowed",
    )
    _problem(
        api.client.get("/api/v1/workflows", headers=admin, params={"status": "asleep"}),
        422,
        "validation_failed",
    )
    _, run_id = _started(api, admin)
    for path in (
        f"signals/{uuid.uuid4()}",
        f"artifacts/{uuid.uuid4()}",
        f"artifacts/{uuid.uuid4()}/download",
        "report",
    ):
        _problem(
            api.client.get(f"/api/v1/workflows/{run_id}/{path}", headers=admin), 404, "not_found"
        )
    assert api.client.get(f"/api/v1/workflows/{run_id}/artifacts", headers=admin).json() == []


def test_signals_are_durable_deduplicated_and_validated(api: Api) -> None:
    admin = api.key()
    _, run_id = _started(api, admin)
    body = {"type": "framework_selected", "payload": {"framework": "SCF"}}

    first = _signal(api, admin, run_id, body, key="fw")
    assert first.status_code == 202, first.text
    receipt = first.json()
    assert receipt["fate"] == "pending" and receipt["duplicate"] is False
    assert receipt["run"]["id"] == run_id
    again = _signal(api, admin, run_id, {**body, "idempotency_key": "fw"})
    assert again.status_code == 202
    assert (again.json()["signal_id"], again.json()["duplicate"]) == (receipt["signal_id"], True)
    changed = _signal(
        api, admin, run_id, {**body, "payload": {"framework": "ISO 27001:2022"}}, key="fw"
    )
    assert _problem(changed, 409, "idempotency_conflict")["signal_id"] == receipt["signal_id"]

    _problem(_signal(api, admin, run_id, {"type": "job_completed"}), 422, "validation_failed")
    _problem(_signal(api, admin, run_id, {"type": "soa_approved"}), 422, "invalid_input")
    _problem(_signal(api, admin, run_id, {**body, "surprise": 1}), 422, "validation_failed")
    _problem(_signal(api, admin, str(uuid.uuid4()), body), 404, "not_found")
    bad_key = _signal(api, admin, run_id, body, key="x" * 300)
    _problem(bad_key, 422, "validation_failed")

    listed = api.client.get(
        f"/api/v1/workflows/{run_id}/signals", headers=admin, params={"fate": "pending"}
    ).json()["items"]
    mine = [s for s in listed if s["type"] == "framework_selected"]
    assert [(s["signal_id"], s["idempotency_key"]) for s in mine] == [(receipt["signal_id"], "fw")]


def test_scopes_decide_which_signals_a_key_may_send(api: Api) -> None:
    admin = api.key()
    _, run_id = _started(api, admin)
    signaller = api.key("signal", principal="user:svc")
    reader = api.key("read")
    denied = _signal(
        api, signaller, run_id, {"type": "soa_approved", "approval_event_id": str(uuid.uuid4())}
    )
    assert _problem(denied, 403, "insufficient_scope")["required_scopes"] == ["approve"]
    cancel = _signal(api, signaller, run_id, {"type": "assessment_cancelled"})
    _problem(cancel, 403, "insufficient_scope")
    _problem(
        _signal(api, reader, run_id, {"type": "framework_selected"}), 403, "insufficient_scope"
    )
    _problem(
        api.client.post(
            f"/api/v1/workflows/{run_id}/cancel", headers=signaller, json={"reason": "no"}
        ),
        403,
        "insufficient_scope",
    )
    allowed = _signal(
        api, signaller, run_id, {"type": "framework_selected", "payload": {"framework": "SCF"}}
    )
    assert allowed.status_code == 202
