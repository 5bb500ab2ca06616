"""A run's authority: the principal it acts for outside the database, the API key and the
scopes that principal started it with. Re-checked before each effect made on the starter's
behalf: a revoked key stops new effects, with the reason, until someone adopts the run."""

from __future__ import annotations

from datetime import UTC
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.identity import Actor
from orchestrator.db.apikey_models import ApiKey
from orchestrator.service.apikeys import Principal


class RunAuthority(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    principal: str
    key_id: str | None = None
    """The API key it acts with; None: an in-process caller (console CLI, Python), which
    no revocation reaches."""
    scopes: list[str] = []

    @classmethod
    def of_principal(cls, principal: Principal) -> RunAuthority:
        return cls(
            principal=principal.principal,
            key_id=principal.key_id,
            scopes=sorted(scope.value for scope in principal.scopes),
        )

    @classmethod
    def of_actor(cls, actor: Actor) -> RunAuthority:
        return cls(principal=actor.actor_id)


def authority_problem(session: Session, authority: dict[str, Any] | None) -> str | None:
    """Why the run may no longer act on its starter's behalf; None while it may."""
    if not authority or not authority.get("key_id"):
        return None
    held = RunAuthority.model_validate(authority)
    key = session.scalar(select(ApiKey).where(ApiKey.key_id == held.key_id))
    whose = f"API key {held.key_id} of {held.principal}"
    if key is None:
        return f"the run's authority is gone: {whose} no longer exists"
    if key.revoked_at is not None:
        revoked = key.revoked_at.replace(tzinfo=key.revoked_at.tzinfo or UTC).isoformat()
        return (
            f"the run's authority was revoked: {whose} was revoked at {revoked}; no new "
            "effects are made on its behalf until someone adopts the run"
        )
    lost = sorted(set(held.scopes) - set(key.scopes))
    if lost:
        return f"the run's authority shrank: {whose} no longer holds {', '.join(lost)}"
    return None
