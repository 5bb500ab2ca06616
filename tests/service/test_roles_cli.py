"""`celery -A orchestrator lifecycle role grant|revoke|list`: an admin grants approver
roles to principals; every change is audited; `roles_of` answers what a principal holds."""

from __future__ import annotations

from pathlib import Path

from orchestrator.service.roles import roles_of
from tests.support.cli import here, here_json

TENANT, ANA = "tenant-cli-roles", "user:ana@acme.example"


def test_roles_are_granted_listed_and_revoked_from_the_cli_with_an_audit_trail(
    embedded: Path,
) -> None:
    granted = here_json(
        "role",
        "grant",
        "--tenant",
        TENANT,
        "--principal",
        ANA,
        "--role",
        "ciso",
        "--reason",
        "new CISO",
        "--actor",
        "user:root@acme.example",
    )
    assert (granted["changed"], granted["roles"]) == (True, ["ciso"])
    text = here("role", "grant", "--tenant", TENANT, "--principal", ANA, "--role", "assessor")
    assert text.exit_code == 0 and "now holds: assessor, ciso" in text.output
    again = here("role", "grant", "--tenant", TENANT, "--principal", ANA, "--role", "ciso")
    assert again.exit_code == 0 and again.output.startswith("already granted: ciso")
    assert roles_of(TENANT, ANA) == ["assessor", "ciso"]
    assert roles_of("another-tenant", ANA) == [], "roles belong to one tenant's principal"

    listed = here_json("role", "list", "--tenant", TENANT)["items"]
    assert [(g["principal"], g["role"]) for g in listed] == [(ANA, "assessor"), (ANA, "ciso")]
    assert listed[1]["granted_by"] == "user:root@acme.example"

    revoked = here(
        "role",
        "revoke",
        "--tenant",
        TENANT,
        "--principal",
        ANA,
        "--role",
        "ciso",
        "--reason",
        "rotated",
        "--actor",
        "user:root@acme.example",
    )
    assert revoked.exit_code == 0 and "revoked: ciso" in revoked.output
    assert roles_of(TENANT, ANA) == ["assessor"]
    missing = here("role", "revoke", "--tenant", TENANT, "--principal", ANA, "--role", "ciso")
    assert missing.exit_code == 1 and "does not hold the role 'ciso'" in missing.output

    history = here_json("role", "list", "--tenant", TENANT, "--history")["items"]
    assert [(h["action"], h["role"], h["actor_id"], h["reason"]) for h in history] == [
        ("revoked", "ciso", "user:root@acme.example", "rotated"),
        ("granted", "assessor", history[1]["actor_id"], None),
        ("granted", "ciso", "user:root@acme.example", "new CISO"),
    ]
    assert history[1]["actor_id"].startswith("operator:"), "the default actor is the login"
    table = here("role", "list", "--tenant", TENANT, "--history")
    assert table.exit_code == 0 and "revoked" in table.output and "rotated" in table.output


def test_a_role_name_is_checked(embedded: Path) -> None:
    bad = here("role", "grant", "--tenant", TENANT, "--principal", ANA, "--role", "Big Boss")
    assert bad.exit_code == 1 and "is not a role name" in bad.output
    assert here_json("role", "list", "--tenant", TENANT, "--history")["items"] == []
