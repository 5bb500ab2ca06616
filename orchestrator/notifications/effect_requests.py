"""What each kind of effect sends: the URL, the signed JSON body and its headers.

Every body is a webhook document (`id`, `type`, `tenant_id`, `run_id`, `created_at`,
`data`) signed like the webhooks (`X-Lifecycle-Signature`) with the target's secret. The
id is the effect's own, stable across attempts, and goes out as `Idempotency-Key` too:
a target that honours it stores a publication once however often it is sent.

- `export` (type `export.published`): the draft (kind, version, sha256, content).
- `export_retraction` (`export.retracted`): which publication to withdraw, and why.
- `approval_withdrawal` (`approval.withdrawn`): the approval request withdrawn, and why.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.external_effects import EffectKind
from orchestrator.db.effect_models import ExportTarget, ExternalEffect
from orchestrator.db.models import Artifact, WorkflowRun
from orchestrator.db.ops_models import Notification, WebhookSubscription
from orchestrator.notifications import signing


@dataclass(frozen=True)
class EffectRequest:
    url: str
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True)
class _Target:
    url: str
    secret: str
    active: bool


def build_request(
    session: Session, effect: ExternalEffect, run: WorkflowRun, now: datetime
) -> EffectRequest | str:
    """The request, or why it cannot be made now (a problem worth another try later)."""
    kind = EffectKind(effect.kind)
    target = _target(session, kind, effect.target_id)
    if target is None:
        return f"its target {effect.target_id} no longer exists"
    built = _BUILDERS[kind](session, effect, run)
    if isinstance(built, str):
        return built
    event_type, data = built
    document = {
        "id": str(effect.id),
        "type": event_type,
        "tenant_id": run.tenant_id,
        "run_id": str(run.id),
        "created_at": now.isoformat(),
        "data": {
            "assessment_id": str(run.assessment_id),
            "organization_id": run.organization_id,
            **data,
        },
    }
    body = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "assessment-lifecycle-effects/1",
        "Idempotency-Key": str(effect.id),
        **signing.signed_headers(
            target.secret, str(effect.id), event_type, body, int(now.timestamp())
        ),
    }
    return EffectRequest(target.url, body, headers)


def target_active(session: Session, effect: ExternalEffect) -> bool:
    target = _target(session, EffectKind(effect.kind), effect.target_id)
    return target is not None and target.active


def _target(session: Session, kind: EffectKind, target_id: uuid.UUID) -> _Target | None:
    model: Any = WebhookSubscription if kind is EffectKind.APPROVAL_WITHDRAWAL else ExportTarget
    row = session.execute(
        select(model.url, model.secret, model.active).where(model.id == target_id)
    ).first()
    return _Target(row.url, row.secret, row.active) if row is not None else None


Built = tuple[str, dict[str, Any]] | str


def _export(session: Session, effect: ExternalEffect, run: WorkflowRun) -> Built:
    artifact = session.scalar(
        select(Artifact).where(
            Artifact.run_id == run.id,
            Artifact.kind == effect.artifact_kind,
            Artifact.version == effect.artifact_version,
        )
    )
    if artifact is None:
        return f"{effect.artifact_kind} v{effect.artifact_version} is not written yet"
    return "export.published", {
        "action": "publish",
        "artifact": {
            "id": str(artifact.id),
            "kind": artifact.kind,
            "version": artifact.version,
            "sha256": artifact.sha256,
            "media_type": artifact.media_type,
        },
        "content": artifact.content,
    }


def _retraction(session: Session, effect: ExternalEffect, run: WorkflowRun) -> Built:
    return "export.retracted", {
        "action": "retract",
        "retracts": str(effect.compensates_id),
        "artifact": {"kind": effect.artifact_kind, "version": effect.artifact_version},
        "reason": effect.undo_reason,
    }


def _withdrawal(session: Session, effect: ExternalEffect, run: WorkflowRun) -> Built:
    request = session.get(Notification, effect.notification_id)
    if request is None:
        return f"the webhook event {effect.notification_id} it withdraws is gone"
    return "approval.withdrawn", {
        **{k: v for k, v in request.payload.items() if k in ("gate", "version", "step")},
        "withdraws": str(request.id),
        "reason": effect.undo_reason,
    }


_BUILDERS = {
    EffectKind.EXPORT: _export,
    EffectKind.EXPORT_RETRACTION: _retraction,
    EffectKind.APPROVAL_WITHDRAWAL: _withdrawal,
}
