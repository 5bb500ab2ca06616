"""Per-tenant export targets: where the drafts a run's definition publishes are POSTed,
the secret that signs each body, and whether the target honours Idempotency-Key."""

from __future__ import annotations

import uuid
from datetime import datetime

from pydantic import BaseModel, ConfigDict

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.effect_models import ExportTarget
from orchestrator.notifications.signed_targets import (
    add_once,
    deactivate_row,
    secret_or_new,
    tenant_rows,
)
from orchestrator.notifications.subscriptions import check_url


class ExportTargetView(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: uuid.UUID
    tenant_id: str
    url: str
    artifact_kinds: list[str]
    idempotent: bool
    active: bool
    created_at: datetime
    secret: str | None = None
    """Shown once, when the target is added."""


def add_export_target(
    actor: Actor,
    url: str,
    *,
    artifact_kinds: list[str] | None = None,
    idempotent: bool = False,
    secret: str | None = None,
) -> ExportTargetView:
    """Publish the tenant's drafts to `url` from now on. `idempotent`: the target stores a
    publication once however often it is sent with the same Idempotency-Key, so a
    publication whose outcome is unknown may simply be sent again."""
    check_url(url)
    row = ExportTarget(
        id=new_id(),
        tenant_id=actor.tenant_id,
        url=url,
        secret=secret_or_new(secret, "target's"),
        artifact_kinds=_kinds(artifact_kinds or []),
        idempotent=idempotent,
        active=True,
        created_by=actor.actor_id,
        created_at=utcnow(),
    )
    add_once(row, f"{url} is already an export target of this tenant")
    return _view(row).model_copy(update={"secret": row.secret})


def list_export_targets(actor: Actor) -> list[ExportTargetView]:
    return [_view(row) for row in tenant_rows(ExportTarget, actor)]


def deactivate_export_target(actor: Actor, target_id: uuid.UUID) -> ExportTargetView:
    """No new publications go there; retractions of what it received still do."""
    return _view(deactivate_row(ExportTarget, actor, target_id, "export target"))


def _kinds(kinds: list[str]) -> list[str]:
    known = {kind.value for kind in ArtifactKind}
    unknown = sorted(set(kinds) - known)
    if unknown:
        raise InvalidInput(f"unknown artifact kinds: {', '.join(unknown)}")
    return sorted(set(kinds))


def _view(row: ExportTarget) -> ExportTargetView:
    return ExportTargetView(
        id=row.id,
        tenant_id=row.tenant_id,
        url=row.url,
        artifact_kinds=list(row.artifact_kinds),
        idempotent=row.idempotent,
        active=row.active,
        created_at=row.created_at,
    )
