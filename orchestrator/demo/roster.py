"""The demo assessment's roster: a few people drafts propose as owners, one of whom the
scripted reviewer confirms on a gap finding."""

from __future__ import annotations

from orchestrator.service.roster import Person

DEMO_ROSTER = (
    Person(name="Dana Whitfield", email="dana@example.org", roles=["owner", "approver"]),
    Person(
        name="Lee Park",
        email="lee.park@example.org",
        roles=["control_owner"],
        title="Identity & Access Manager",
    ),
    Person(
        name="Sam Ortiz",
        principal="user:sam@example.org",
        roles=["control_owner", "isso"],
        domains=["IRO", "BCD"],
    ),
)
#: Who the reviewer names as a finding's owner (confirming a person, not a role).
CONFIRMED_OWNER = DEMO_ROSTER[0].name
