"""API keys: hashed at rest, tenant-bound, scoped, revocable, created by a command."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.cli.main import main
from orchestrator.db.apikey_models import ApiKey
from orchestrator.db.session import transaction
from orchestrator.service.apikeys import create_key, hash_key
from tests.api.conftest import Api


def _code(response: Any) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/problem+json", response.text
    return response.status_code, response.json()["code"]


def test_requests_without_a_valid_key_are_refused(api: Api) -> None:
    missing = api.client.get("/api/v1/assessments")
    assert _code(missing) == (401, "unauthenticated")
    assert missing.headers["www-authenticate"].startswith("Bearer")
    wrong = api.client.get("/api/v1/assessments", headers={"Authorization": "Bearer lk_nope"})
    assert _code(wrong) == (401, "invalid_api_key")
    basic = api.client.get("/api/v1/assessments", headers={"Authorization": "Basic eDp5"})
    assert _code(basic) == (401, "unauthenticated")


def test_keys_are_stored_hashed_and_revocation_is_immediate(
    api: Api, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "apikey",
                "create",
                "--tenant",
                "acme",
                "--principal",
                "user:ana@acme",
                "--scope",
                "read,signal",
                "--organization",
                "acme-org",
                "--name",
                "ci",
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    key = printed.strip().splitlines()[-1]
    key_id = key.removeprefix("lk_").split(".")[0]
    assert "read, signal" in printed and "acme-org" in printed
    with transaction() as session:
        row = session.scalar(select(ApiKey).where(ApiKey.key_id == key_id))
        assert row is not None and row.secret_hash == hash_key(key)
        stored = [str(value) for value in vars(row).values()]
    assert not any(key in value for value in stored), "the key itself is never stored"

    headers = {"Authorization": f"Bearer {key}"}
    assert api.client.get("/api/v1/assessments", headers=headers).status_code == 200
    assert main(["apikey", "list", "--tenant", "acme"]) == 0
    listing = capsys.readouterr().out
    assert key_id in listing and "active" in listing and key not in listing
    assert main(["apikey", "revoke", key_id]) == 0
    assert _code(api.client.get("/api/v1/assessments", headers=headers)) == (401, "invalid_api_key")
    assert main(["apikey", "revoke", "unknown"]) == 1  # refused
    assert (
        main(["apikey", "create", "--tenant", "acme", "--principal", "p", "--scope", "superuser"])
        == 1
    )
    assert "unknown scope" in capsys.readouterr().err


def test_each_scope_opens_only_its_own_doors(api: Api) -> None:
    reader = api.key("read")
    signaller = api.key("signal")
    approver = api.key("approve")
    assessment = api.create_assessment(signaller)
    url = f"/api/v1/assessments/{assessment['id']}"
    assert api.client.get(url, headers=reader).status_code == 200
    assert _code(api.client.get(url, headers=signaller)) == (403, "insufficient_scope")
    create = {"organization_id": "acme-org", "name": "x"}
    assert _code(api.client.post("/api/v1/assessments", headers=reader, json=create)) == (
        403,
        "insufficient_scope",
    )
    run_id = api.start(signaller, assessment["id"], "s").json()["id"]
    approval = {"artifact_kind": "soa", "artifact_version": 1}
    denied = api.client.post(
        f"/api/v1/workflows/{run_id}/approvals", headers=signaller, json=approval
    )
    assert _code(denied) == (403, "insufficient_scope")
    assert denied.json()["required_scopes"] == ["approve"]
    waiting = api.client.post(
        f"/api/v1/workflows/{run_id}/approvals", headers=approver, json=approval
    )
    assert _code(waiting) == (404, "not_found")  # allowed in, but no SoA v1 exists yet
    retry = api.client.post(
        f"/api/v1/workflows/{run_id}/retry", headers=approver, json={"reason": "x"}
    )
    assert _code(retry) == (403, "insufficient_scope")


def test_the_approver_is_the_keys_principal_never_the_body(api: Api) -> None:
    owner = api.key("signal", "read")
    approver = api.key("approve", principal="user:reviewer@acme")
    run_id = api.start(owner, api.create_assessment(owner)["id"], "s").json()["id"]
    spoofed = api.client.post(
        f"/api/v1/workflows/{run_id}/approvals",
        headers=approver,
        json={"artifact_kind": "soa", "artifact_version": 1, "approver_id": "user:ciso@acme"},
    )
    assert _code(spoofed) == (422, "validation_failed")
    assert spoofed.json()["errors"][0]["loc"] == ["body", "approver_id"]


def test_a_key_limited_to_organizations_sees_only_those(api: Api) -> None:
    everything = api.key()
    limited = api.key("admin", organizations=["org-a"])
    in_a = api.create_assessment(everything, organization="org-a")
    in_b = api.create_assessment(everything, organization="org-b")
    run_b = api.start(everything, in_b["id"], "b").json()["id"]
    assert api.client.get(f"/api/v1/assessments/{in_a['id']}", headers=limited).status_code == 200
    assert _code(api.client.get(f"/api/v1/assessments/{in_b['id']}", headers=limited)) == (
        404,
        "not_found",
    )
    assert _code(api.client.get(f"/api/v1/workflows/{run_b}", headers=limited)) == (
        404,
        "not_found",
    )
    listed = api.client.get("/api/v1/assessments", headers=limited).json()["items"]
    assert [a["id"] for a in listed] == [in_a["id"]]
    assert api.client.get("/api/v1/workflows", headers=limited).json()["items"] == []
    outside = api.client.post(
        "/api/v1/assessments", headers=limited, json={"organization_id": "org-b", "name": "no"}
    )
    assert _code(outside) == (422, "invalid_input")


def test_keys_need_a_tenant_a_principal_and_a_scope(api: Api) -> None:
    from orchestrator.contracts.errors import InvalidInput

    for tenant, principal, scopes in (("", "p", ["read"]), ("t", " ", ["read"]), ("t", "p", [])):
        with pytest.raises(InvalidInput):
            create_key(tenant, principal, scopes)
