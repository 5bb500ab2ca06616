"""Per-tenant gate settings an admin changes: whether the reviewer who amended a draft
may also approve it.

Separation of duties bars whoever asked for a draft from approving it; an amendment makes
its author the one who asked for the new version. A small team may let an amender approve
their own amendment at a given gate. The setting is read when an approval event is
recorded, and the event keeps what it allowed (`amender_waiver`), as it keeps the roles
held then: the run's decision sees the event, never the setting. So a change applies to
the next decision, on runs already waiting too, and a decision made earlier stays as it
was decided.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.review_models import GateSetting
from orchestrator.db.session import read_transaction, transaction
from orchestrator.service.readiness import GATED


@dataclass(frozen=True)
class GateSettingView:
    kind: ArtifactKind
    amender_may_approve: bool
    updated_by: str | None
    updated_at: datetime | None
    reason: str | None


def _view(kind: ArtifactKind, row: GateSetting | None) -> GateSettingView:
    if row is None:
        return GateSettingView(kind, False, None, None, None)
    at = row.updated_at if row.updated_at.tzinfo is not None else row.updated_at.replace(tzinfo=UTC)
    return GateSettingView(kind, row.amender_may_approve, row.updated_by, at, row.reason)


@retry_busy
def gate_settings(tenant_id: str) -> list[GateSettingView]:
    """Every gate's setting for the tenant (the default where an admin set none)."""
    with read_transaction() as session:
        rows = {
            row.artifact_kind: row
            for row in session.scalars(
                select(GateSetting).where(GateSetting.tenant_id == tenant_id)
            )
        }
    return [_view(kind, rows.get(kind.value)) for kind in GATED]


@retry_busy
def set_gate_setting(
    actor: Actor, kind: ArtifactKind, *, amender_may_approve: bool, reason: str
) -> GateSettingView:
    """Change one gate's setting for the actor's tenant (callers check the admin scope)."""
    if kind not in GATED:
        raise InvalidInput(f"{kind.value} has no approval gate")
    if not reason.strip():
        raise InvalidInput("a change of a gate setting needs a reason")
    with transaction() as session:
        row = session.get(GateSetting, (actor.tenant_id, kind.value))
        if row is None:
            row = GateSetting(tenant_id=actor.tenant_id, artifact_kind=kind.value)
            session.add(row)
        row.amender_may_approve = amender_may_approve
        row.updated_by = actor.actor_id
        row.updated_at = utcnow()
        row.reason = reason.strip()
        session.flush()
        return _view(kind, row)


def amender_may_approve(session: Session, tenant_id: str, kind: ArtifactKind) -> bool:
    row = session.get(GateSetting, (tenant_id, kind.value))
    return bool(row is not None and row.amender_may_approve)
