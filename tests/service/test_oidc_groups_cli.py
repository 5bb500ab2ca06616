"""`celery -A orchestrator lifecycle oidc-group map|unmap|list`: an admin maps the identity
provider's groups to roles and scopes; every change is audited; a person who signed in with
a mapped group holds its role (`roles_of`), and loses it when the group is unmapped."""

from __future__ import annotations

from pathlib import Path

from orchestrator.db.session import read_transaction
from orchestrator.service.oidc_access import group_access, principal_of_identity, record_sign_in
from orchestrator.service.roles import roles_of
from tests.support.cli import here, here_json

TENANT = "tenant-cli-oidc"


def test_groups_are_mapped_listed_and_unmapped_from_the_cli_with_an_audit_trail(
    embedded: Path,
) -> None:
    mapped = here_json(
        "oidc-group", "map", "--tenant", TENANT, "--group", "grc", "--role", "approver",
        "--scope", "read", "--scope", "approve", "--reason", "SSO rollout", "--actor", "user:root",
    )  # fmt: skip
    assert (mapped["changed"], mapped["scopes"]) == (True, ["approve", "read"])
    again = here("oidc-group", "map", "--tenant", TENANT, "--group", "grc", "--role", "approver",
                 "--scope", "approve", "--scope", "read")  # fmt: skip
    assert again.exit_code == 0 and again.output.startswith("already mapped: grc -> approver")
    name, principal = record_sign_in(
        tenant_id=TENANT,
        issuer="https://sso.acme.example",
        issuer_host="sso.acme.example",
        subject="u-17",
        email="ana@acme.example",
        groups=["grc", "staff"],
    )
    assert name == "oidc:sso.acme.example:u-17" and principal is not None
    assert {s.value for s in principal.scopes} == {"approve", "read"}
    assert roles_of(TENANT, name) == ["approver"]
    assert roles_of("another-tenant", name) == []
    with read_transaction() as session:  # who else may decide, as the review pages list them
        assert group_access(session, TENANT) == [(name, ["approve", "read"], ["approver"])]
        assert group_access(session, "another-tenant") == []

    listed = here("oidc-group", "list", "--tenant", TENANT)
    assert listed.exit_code == 0 and "grc" in listed.output and "approve,read" in listed.output
    unmapped = here(
        "oidc-group", "unmap", "--tenant", TENANT, "--group", "grc", "--role", "approver"
    )
    assert unmapped.exit_code == 0, unmapped.output
    assert roles_of(TENANT, name) == [] and principal_of_identity(name) is None
    with read_transaction() as session:
        assert group_access(session, TENANT) == []
    history = here_json("oidc-group", "list", "--tenant", TENANT, "--history")["items"]
    assert [(e["action"], e["reason"]) for e in history] == [
        ("revoked", None),
        ("granted", "SSO rollout"),
    ]
    missing = here("oidc-group", "unmap", "--tenant", TENANT, "--group", "grc", "--role", "x")
    assert missing.exit_code != 0 and "not mapped" in missing.output
