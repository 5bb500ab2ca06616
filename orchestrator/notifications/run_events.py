"""Run transitions as webhook events: `run.step_started`, `run.step_completed`,
`run.waiting` (with `approval.requested` beside it when the wait is for an approval),
`run.completed`, `run.failed`, `run.cancelled`.

They come from the audit effects the coordinator writes, in the same transaction: an
event and the promise to deliver it commit with the transition. Each event's id derives
from the signal that caused it, so applying a signal again after a crash yields the same
ids and nothing twice. A tenant with no subscription costs one small read per batch and
no rows.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.audit import AuditEventType as _E
from orchestrator.db.ops_models import WebhookSubscription
from orchestrator.notifications.events import NotificationEvent, event_id
from orchestrator.notifications.settings import webhook_settings

_EVENTS: dict[_E, NotificationEvent] = {
    _E.LIFECYCLE_WORKFLOW_STEP_STARTED: NotificationEvent.RUN_STEP_STARTED,
    _E.LIFECYCLE_WORKFLOW_STEP_COMPLETED: NotificationEvent.RUN_STEP_COMPLETED,
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT: NotificationEvent.RUN_WAITING,
    _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL: NotificationEvent.RUN_WAITING,
    _E.LIFECYCLE_WORKFLOW_COMPLETED: NotificationEvent.RUN_COMPLETED,
    _E.LIFECYCLE_WORKFLOW_FAILED: NotificationEvent.RUN_FAILED,
    _E.LIFECYCLE_WORKFLOW_CANCELLED: NotificationEvent.RUN_CANCELLED,
}

_WAITS = {_E.LIFECYCLE_WORKFLOW_WAITING_FOR_INPUT: "waiting_for_input",
          _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL: "waiting_for_approval"}


@dataclass(frozen=True)
class RunEvent:
    id: uuid.UUID
    event: NotificationEvent
    data: dict[str, Any]


@dataclass
class RunEvents:
    """The run events of one coordinator transaction, written when its rows are."""

    run_id: uuid.UUID
    tenant_id: str
    organization_id: str
    assessment_id: uuid.UUID
    pending: list[RunEvent] = field(default_factory=list)

    def collect(self, event_type: _E, step: str | None, metadata: dict[str, Any],
                cause: object) -> None:
        event = _EVENTS.get(event_type)
        if event is None:
            return
        data: dict[str, Any] = {"run_id": str(self.run_id),
                                "assessment_id": str(self.assessment_id),
                                "organization_id": self.organization_id, "step": step,
                                **{k: v for k, v in metadata.items() if v is not None}}
        if event_type in _WAITS:
            data["status"] = _WAITS[event_type]
        console = webhook_settings().console_url.rstrip("/")
        data["console_url"] = f"{console}/runs/{self.run_id}"
        self.pending.append(RunEvent(event_id(self.run_id, cause, event.value, step),
                                     event, data))
        if event_type is _E.LIFECYCLE_WORKFLOW_WAITING_FOR_APPROVAL:
            gate, version = metadata.get("artifact_kind"), metadata.get("artifact_version")
            requested = {**data, "gate": gate, "version": version,
                         "console_url": f"{console}/runs/{self.run_id}/artifacts/{gate}"
                                        f"?version={version}"}
            self.pending.append(RunEvent(
                event_id(self.run_id, cause, NotificationEvent.APPROVAL_REQUESTED.value, step),
                NotificationEvent.APPROVAL_REQUESTED, requested))

    def write(self, session: Session, now: datetime) -> list[int]:
        """Record the collected events for the tenant's subscriptions; the deliveries'
        ids, to be dispatched after commit."""
        events, self.pending = self.pending, []
        if not events or not _subscribed(session, self.tenant_id, events):
            return []
        # Imported here: the sweeps package (which enqueue uses) imports the coordinator.
        from orchestrator.notifications.enqueue import notify

        deliveries: list[int] = []
        for item in events:
            deliveries += notify(session, event_id=item.id, tenant_id=self.tenant_id,
                                 run_id=self.run_id, event=item.event, payload=item.data,
                                 now=now)
        return deliveries


def _subscribed(session: Session, tenant_id: str, events: list[RunEvent]) -> bool:
    wanted = {item.event.value for item in events}
    for types in session.scalars(select(WebhookSubscription.event_types).where(
            WebhookSubscription.tenant_id == tenant_id,
            WebhookSubscription.active.is_(True))):
        if not types or wanted & set(types):
            return True
    return False
