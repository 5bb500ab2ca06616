"""Approver roles over HTTP: granted by a tenant's admin, never claimed in a request body.

An approval event carries the roles its principal held when it was recorded; the gate's
policy checks those. A body naming a role the principal does not hold is refused.
"""

from __future__ import annotations

from typing import Any

from tests.api.conftest import Api, Headers, waiting_at
from tests.support.http_lifecycle import select_framework

TENANT = "tenant-roles"
REVIEWER, CISO = "user:reviewer@roles", "user:ciso@roles"


def _code(response: Any) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json", response.text
    return response.status_code, response.json()["code"]


def _run_at_soa(api: Api, owner: Headers, policies: dict[str, Any] | None = None) -> str:
    """A run waiting at its SoA gate, which asks for no rows decided first (these tests are
    about roles)."""
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    soa = {"require_decided": False, **(policies or {}).get("soa", {})}
    started = api.client.post(
        f"/api/v1/assessments/{assessment['id']}/workflows/lifecycle/start",
        headers={**owner, "Idempotency-Key": f"start-{assessment['id']}"},
        json={"approval_policies": {**(policies or {}), "soa": soa}},
    )
    assert started.status_code == 201, started.text
    run_id = str(started.json()["id"])
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    select_framework(api, owner, run_id)
    api.follow(owner, run_id, waiting_at("wait_for_soa_approval"))
    return run_id


def _approve(api: Api, headers: Headers, run_id: str, **body: Any) -> Any:
    return api.client.post(
        f"/api/v1/workflows/{run_id}/approvals",
        headers=headers,
        json={"artifact_kind": "soa", "artifact_version": 1, **body},
    )


def _signal(api: Api, headers: Headers, run_id: str, event_id: str, key: str) -> Any:
    return api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": 10},
        headers={**headers, "Idempotency-Key": key},
        json={"type": "soa_approved", "approval_event_id": event_id},
    )


def test_a_role_is_granted_by_an_admin_never_claimed(running_api: Api) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant=TENANT, principal="user:owner@roles")
    admin = api.key("admin", tenant=TENANT, principal="user:admin@roles")
    reviewer = api.key("approve", "read", tenant=TENANT, principal=REVIEWER)
    run_id = _run_at_soa(api, owner)

    for claimed in ("ciso", "janitor"):
        refused = _approve(api, reviewer, run_id, approver_role=claimed)
        assert _code(refused) == (422, "role_not_held"), claimed
        assert f"does not hold the role '{claimed}'" in refused.json()["detail"]
    no_role = _approve(api, reviewer, run_id)
    assert _code(no_role) == (422, "role_not_held")
    assert "holds no approver role" in no_role.json()["detail"]
    assert "role grant" in no_role.json()["detail"], "the refusal says how to get a role"
    listed = api.client.get(f"/api/v1/workflows/{run_id}/approvals", headers=owner).json()
    assert listed == [], "nothing refused was recorded"

    grant = {"principal": REVIEWER, "role": "assessor", "reason": "SoA reviewer"}
    assert _code(api.client.post("/api/v1/roles/grant", headers=reviewer, json=grant)) == (
        403,
        "insufficient_scope",
    ), "only an admin grants roles"
    granted = api.client.post("/api/v1/roles/grant", headers=admin, json=grant)
    assert granted.status_code == 201, granted.text
    assert (granted.json()["changed"], granted.json()["roles"]) == (True, ["assessor"])
    again = api.client.post("/api/v1/roles/grant", headers=admin, json=grant)
    assert (again.status_code, again.json()["changed"]) == (200, False)
    mine = api.client.get("/api/v1/roles/me", headers=reviewer).json()
    assert mine == {"tenant_id": TENANT, "principal": REVIEWER, "roles": ["assessor"]}

    still_not_ciso = _approve(api, reviewer, run_id, approver_role="ciso")
    assert _code(still_not_ciso) == (422, "role_not_held")
    assert "holds: assessor" in still_not_ciso.json()["detail"]
    event = _approve(api, reviewer, run_id)
    assert event.status_code == 201, event.text
    assert (event.json()["approver_role"], event.json()["approver_roles"]) == (None, ["assessor"])
    named = _approve(api, reviewer, run_id, approver_role="assessor")
    assert named.json()["approver_roles"] == ["assessor"]

    revoked = api.client.post(
        "/api/v1/roles/revoke",
        headers=admin,
        json={"principal": REVIEWER, "role": "assessor", "reason": "left the team"},
    )
    assert (revoked.status_code, revoked.json()["roles"]) == (200, [])
    assert _code(api.client.post("/api/v1/roles/revoke", headers=admin, json=grant)) == (
        404,
        "not_found",
    )
    assert _code(_approve(api, reviewer, run_id)) == (422, "role_not_held")
    # The event recorded while the role was held keeps the roles held at that moment.
    accepted = _signal(api, reviewer, run_id, event.json()["id"], "soa-by-reviewer")
    assert (accepted.status_code, accepted.json()["fate"]) == (202, "applied"), accepted.text

    history = api.client.get(
        "/api/v1/roles/history", headers=admin, params={"principal": REVIEWER}
    ).json()
    assert [(h["action"], h["role"], h["actor_id"], h["reason"]) for h in history] == [
        ("revoked", "assessor", "user:admin@roles", "left the team"),
        ("granted", "assessor", "user:admin@roles", "SoA reviewer"),
    ]
    assert api.client.get("/api/v1/roles", headers=admin).json() == []
    assert api.client.get("/api/v1/roles", headers=api.key("admin", tenant="other")).json() == [], (
        "a tenant's admin sees only its own tenant"
    )


def test_the_gate_checks_the_roles_held_when_the_event_was_recorded(running_api: Api) -> None:
    api = running_api
    tenant = "tenant-roles-policy"
    owner = api.key("signal", "read", tenant=tenant, principal="user:owner@roles")
    admin = api.key("admin", tenant=tenant, principal="user:admin@roles")
    assessor = api.key("approve", "read", tenant=tenant, principal=REVIEWER)
    ciso = api.key("approve", "read", tenant=tenant, principal=CISO)
    for principal, role in ((REVIEWER, "assessor"), (CISO, "assessor"), (CISO, "ciso")):
        granted = api.client.post(
            "/api/v1/roles/grant", headers=admin, json={"principal": principal, "role": role}
        )
        assert granted.status_code == 201, granted.text
    run_id = _run_at_soa(api, owner, {"soa": {"mode": "single", "roles": ["ciso"]}})

    by_assessor = _approve(api, assessor, run_id).json()
    assert by_assessor["approver_roles"] == ["assessor"]
    refused = _signal(api, assessor, run_id, by_assessor["id"], "soa-assessor")
    assert _code(refused) == (422, "signal_rejected")
    assert "may not approve this gate" in refused.json()["detail"]
    as_assessor = _approve(api, ciso, run_id, approver_role="assessor").json()
    assert as_assessor["approver_roles"] == ["assessor"], "a named role is the one acted in"
    assert _code(_signal(api, ciso, run_id, as_assessor["id"], "soa-ciso-as-assessor")) == (
        422,
        "signal_rejected",
    )
    every_role = _approve(api, ciso, run_id).json()
    assert every_role["approver_roles"] == ["assessor", "ciso"]
    accepted = _signal(api, ciso, run_id, every_role["id"], "soa-ciso")
    assert (accepted.status_code, accepted.json()["fate"]) == (202, "applied"), accepted.text
    records = api.client.get(f"/api/v1/workflows/{run_id}/approvals", headers=owner).json()
    assert [r["approver_roles"] for r in records] == [
        ["assessor"],
        ["assessor"],
        ["assessor", "ciso"],
    ]
