"""Every sweep, declared once.

A sweep is a plain function that keeps runs moving or visibly blocked. Its declaration
here is all the rest of the fleet reads: the beat schedule (entry, task, queue, interval),
the Celery task that beat sends (orchestrator.runtime.sweep_tasks), the interval setting
(LIFECYCLE_SWEEP_INTERVALS, keyed by name), `lifecycle sweep NAME`, the health report's
pulse and the docs table. Adding a sweep is one `Sweep(...)` below plus its function.

The function is named by its import path, so this module stays below the layers that
define the sweeps (it is read by the engine's schedule and the settings).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Sweep:
    #: The sweep's name: its interval setting's key; `lifecycle sweep` takes it with
    #: hyphens for underscores.
    name: str
    #: "package.module:function", called with no arguments; returns what it handled.
    run: str
    #: Default seconds between two runs under `celery beat`.
    interval_s: float
    #: What it does, one line (CLI help, docs).
    does: str
    #: The queue beat sends it to.
    queue: str = "orchestrator"
    #: The Celery task's name. Defaults to orchestrator.sweep_<name>; a sweep that had
    #: another name keeps it (messages already queued name it).
    task_name: str | None = None

    @property
    def task(self) -> str:
        return self.task_name or f"orchestrator.sweep_{self.name}"

    @property
    def cli_name(self) -> str:
        return self.name.replace("_", "-")

    @property
    def entry(self) -> str:
        """The beat schedule's entry."""
        return f"sweep-{self.cli_name}"

    def function(self) -> Callable[[], Any]:
        module, _, attribute = self.run.partition(":")
        found: Callable[[], Any] = getattr(importlib.import_module(module), attribute)
        return found


SWEEPS: tuple[Sweep, ...] = (
    Sweep(
        "messages",
        "orchestrator.sweeps.missing_messages:resend_missing_messages",
        5,
        "resend a queued job's message the broker no longer holds",
        task_name="orchestrator.sweep_missing_messages",
    ),
    Sweep(
        "outbox",
        "orchestrator.sweeps.unpublished_outbox:publish_stale_outbox",
        15,
        "publish outbox rows their transaction's writer did not",
    ),
    Sweep(
        "inbox",
        "orchestrator.sweeps.pending_signals:rekick_pending_runs",
        30,
        "wake runs whose recorded signals nobody applied",
    ),
    Sweep(
        "lost_jobs",
        "orchestrator.sweeps.lost_jobs:recover_lost_jobs",
        60,
        "redispatch jobs past their deadline; dead-letter those out of attempts",
    ),
    Sweep(
        "approval_waits",
        "orchestrator.sweeps.approval_waits:sweep_approval_waits",
        60,
        "remind, escalate and block approvals that wait too long",
    ),
    Sweep(
        "sla",
        "orchestrator.sweeps.sla:sweep_sla",
        300,
        "flag runs past their completion SLA",
    ),
    Sweep(
        "stale",
        "orchestrator.sweeps.stale:sweep_stale",
        300,
        "flag runs idle too long",
    ),
    Sweep(
        "review_claims",
        "orchestrator.service.review_claims:release_lapsed_claims",
        60,
        "release reviewers' claims that lapsed",
    ),
    Sweep(
        "evidence",
        "orchestrator.sweeps.evidence_expiry:sweep_evidence_expiry",
        300,
        "remind owners of evidence about to expire, then mark it expired at its date",
        task_name="orchestrator.sweep_evidence_expiry",
    ),
    Sweep(
        "evidence_requests",
        "orchestrator.sweeps.overdue_requests:sweep_overdue_requests",
        300,
        "remind, then escalate, evidence requests past their due date",
        task_name="orchestrator.sweep_overdue_requests",
    ),
    Sweep(
        "notifications",
        "orchestrator.notifications.sweep:sweep_deliveries",
        15,
        "deliver due notifications (webhooks), retrying with backoff",
        queue="notifications",
        task_name="notifications.sweep",
    ),
    Sweep(
        "effects",
        "orchestrator.notifications.effect_sweep:sweep_effects",
        15,
        "make due outside effects and hand over those whose outcome is unknown",
        queue="notifications",
        task_name="effects.sweep",
    ),
)


def declared() -> tuple[Sweep, ...]:
    """Every sweep, read when asked (what derives from them never keeps its own copy)."""
    return SWEEPS


def by_name() -> dict[str, Sweep]:
    return {sweep.name: sweep for sweep in declared()}
