"""Effects outside the database in tests: quick timeouts, a run at its report draft."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config.effects import EffectSettings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.external_effects import EffectStatus
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.engine.outside_effects import OutsideEffects
from orchestrator.lifecycle.effects import PublishDraft
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.service.effect_views import EffectView, list_effects
from orchestrator.service.handoffs import list_handoffs
from tests.support.sweeps import Clock, drive_to, installed_clock, start_run
from tests.support.webhook_receiver import Receiver, webhook_receiver

REPORT_WAIT = "wait_for_report_approval"


@pytest.fixture
def quick(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """No answer within half a second is no answer; two tries, no backoff."""
    monkeypatch.setenv("LIFECYCLE_EFFECT_TIMEOUT_S", "0.5")
    monkeypatch.setenv("LIFECYCLE_EFFECT_MAX_ATTEMPTS", "2")
    monkeypatch.setenv("LIFECYCLE_EFFECT_BACKOFF_BASE_S", "0")
    yield from installed_clock()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with webhook_receiver() as running:
        yield running


def effects(owner: Actor, run_id: uuid.UUID, kind: str | None = None) -> list[EffectView]:
    return [e for e in list_effects(owner, run_id) if kind is None or e.kind == kind]


def make_due(owner: Actor, run_id: uuid.UUID) -> list[EffectStatus | None]:
    """The worker's part, for every effect of the run waiting to be made."""
    return [
        perform_effect(effect.id)
        for effect in effects(owner, run_id)
        if effect.status == EffectStatus.PENDING.value
    ]


def at_report(owner: Actor, reviewer: Actor, url: str, idempotent: bool = False) -> uuid.UUID:
    add_export_target(owner, url, idempotent=idempotent)
    run_id = start_run(owner)
    drive_to(reviewer, run_id, REPORT_WAIT)
    return run_id


def failed_export_handoff(owner: Actor, run_id: uuid.UUID) -> uuid.UUID:
    """A handoff on the run: its report v1 exported, by the engine's own recording and the
    worker's own function, to a target nothing listens on, given up after one try."""
    add_export_target(owner, f"http://127.0.0.1:{closed_port()}/exports")
    with transaction() as session:
        run = session.get(WorkflowRun, run_id)
        outside = OutsideEffects(session, run, utcnow())
        outside.publish(PublishDraft(ArtifactKind.REPORT, 1))
    [effect] = outside.recorded
    assert perform_effect(effect, settings=EffectSettings(max_attempts=1)) is EffectStatus.FAILED
    [handoff] = [h.id for h in list_handoffs(owner, run_id=run_id) if h.effect_id == effect]
    return handoff


def closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
