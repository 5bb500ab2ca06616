"""Who is calling, and how the fleet is woken: nouns every layer above shares."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

#: Wakes the coordinator for one run (a Celery message in production, a call in tests).
Kick = Callable[[uuid.UUID], None]


@dataclass(frozen=True)
class Actor:
    """Who is calling, and for which tenant. Every lookup is scoped to the tenant."""

    tenant_id: str
    actor_id: str
    organizations: frozenset[str] | None = None
    """The organizations this actor may see; None: every organization of the tenant."""

    def sees(self, organization_id: str) -> bool:
        return self.organizations is None or organization_id in self.organizations
