"""Granting approver roles in tests, the way an admin would before anyone approves."""

from __future__ import annotations

from orchestrator.contracts.identity import Actor
from orchestrator.service.roles import grant_role

TEST_ADMIN = "user:admin@tests"


def grant(actor: Actor, *roles: str) -> Actor:
    """Grant `roles` (default: assessor) to `actor`'s principal; returns the actor."""
    for role in roles or ("assessor",):
        grant_role(actor.tenant_id, actor.actor_id, role, actor_id=TEST_ADMIN)
    return actor
