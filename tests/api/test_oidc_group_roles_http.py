"""The identity provider's groups mapped to roles over HTTP: by a tenant's admin only, each
change audited, one tenant's mappings invisible and untouchable to another's admin."""

from __future__ import annotations

from tests.api.conftest import Api

BASE = "/api/v1/oidc/group-roles"


def test_an_admin_maps_and_unmaps_a_group_and_every_change_is_audited(api: Api) -> None:
    admin = api.key("admin", principal="user:root@acme")
    body = {"group": "grc-approvers", "role": "approver", "scopes": ["read", "approve"]}

    mapped = api.client.post(f"{BASE}/map", headers=admin, json={**body, "reason": "SSO"})
    again = api.client.post(f"{BASE}/map", headers=admin, json=body)
    widened = api.client.post(f"{BASE}/map", headers=admin, json={**body, "scopes": ["admin"]})

    assert (mapped.status_code, again.status_code, widened.status_code) == (201, 200, 201)
    assert mapped.json()["scopes"] == ["approve", "read"]
    listed = api.client.get(BASE, headers=admin).json()
    assert [(m["group"], m["role"], m["scopes"]) for m in listed] == [
        ("grc-approvers", "approver", ["admin"])
    ]
    unmapped = api.client.post(
        f"{BASE}/unmap", headers=admin, json={"group": "grc-approvers", "role": "approver"}
    )
    assert unmapped.status_code == 200 and unmapped.json()["action"] == "revoked"
    gone = api.client.post(
        f"{BASE}/unmap", headers=admin, json={"group": "grc-approvers", "role": "approver"}
    )
    assert gone.status_code == 404 and gone.json()["code"] == "not_found"
    history = api.client.get(f"{BASE}/history", headers=admin).json()
    assert [(e["action"], e["scopes"], e["actor_id"], e["reason"]) for e in history] == [
        ("revoked", ["admin"], "user:root@acme", None),
        ("granted", ["admin"], "user:root@acme", None),
        ("granted", ["approve", "read"], "user:root@acme", "SSO"),
    ]


def test_only_an_admin_maps_and_the_mapping_is_checked(api: Api) -> None:
    reader = api.key("read", "approve")
    admin = api.key("admin", principal="user:root@acme")
    body = {"group": "g", "role": "approver"}

    assert api.client.post(f"{BASE}/map", headers=reader, json=body).status_code == 403
    assert api.client.get(BASE, headers=reader).status_code == 403
    bad_role = api.client.post(f"{BASE}/map", headers=admin, json={**body, "role": "Not A Role"})
    assert bad_role.status_code in (400, 422)
    no_scope = api.client.post(f"{BASE}/map", headers=admin, json={**body, "scopes": []})
    assert no_scope.status_code == 422
    assert api.client.get(BASE, headers=admin).json() == []


def test_another_tenants_admin_neither_sees_nor_unmaps_its_groups(api: Api) -> None:
    acme = api.key("admin", principal="user:root@acme")
    globex = api.key("admin", tenant="globex", principal="user:root@globex")
    body = {"group": "grc-approvers", "role": "approver"}
    assert api.client.post(f"{BASE}/map", headers=acme, json=body).status_code == 201

    assert api.client.get(BASE, headers=globex).json() == []
    assert api.client.get(f"{BASE}/history", headers=globex).json() == []
    refused = api.client.post(f"{BASE}/unmap", headers=globex, json=body)
    assert refused.status_code == 404
    assert [m["tenant_id"] for m in api.client.get(BASE, headers=acme).json()] == ["acme"]
