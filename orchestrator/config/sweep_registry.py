"""Every sweep's facts, declared once; its function registers itself where it lives.

A sweep is a plain function that keeps runs moving or visibly blocked. Its declaration
here is all the rest of the fleet reads: the beat schedule (entry, task, queue, interval),
the Celery task that beat sends (orchestrator.runtime.tasks), the interval setting
(LIFECYCLE_SWEEP_INTERVALS, keyed by name), `lifecycle sweep NAME`, the health report's
pulse and the docs table. Its function carries `@sweep("name")` in its own module, which
orchestrator.runtime.registrations imports for every entry point. Adding a sweep is one
`Sweep(...)` below, its function, and that import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from orchestrator.contracts.registry import Registry

SweepFunction = Callable[[], Any]
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Sweep:
    #: The sweep's name: its interval setting's key; `lifecycle sweep` takes it with
    #: hyphens for underscores.
    name: str
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

    def function(self) -> SweepFunction:
        """Its registered function: called with no arguments, returns what it handled."""
        return RUNS[self.name]


SWEEPS: tuple[Sweep, ...] = (
    Sweep(
        "messages",
        5,
        "resend a queued job's message the broker no longer holds",
        task_name="orchestrator.sweep_missing_messages",
    ),
    Sweep(
        "outbox",
        15,
        "publish outbox rows their transaction's writer did not",
    ),
    Sweep(
        "inbox",
        30,
        "wake runs whose recorded signals nobody applied",
    ),
    Sweep(
        "lost_jobs",
        60,
        "redispatch jobs past their deadline; dead-letter those out of attempts",
    ),
    Sweep(
        "approval_waits",
        60,
        "remind, escalate and block approvals that wait too long",
    ),
    Sweep(
        "sla",
        300,
        "flag runs past their completion SLA",
    ),
    Sweep(
        "stale",
        300,
        "flag runs idle too long",
    ),
    Sweep(
        "review_claims",
        60,
        "release reviewers' claims that lapsed",
    ),
    Sweep(
        "evidence",
        300,
        "remind owners of evidence about to expire, then mark it expired at its date",
        task_name="orchestrator.sweep_evidence_expiry",
    ),
    Sweep(
        "evidence_requests",
        300,
        "remind, then escalate, evidence requests past their due date",
        task_name="orchestrator.sweep_overdue_requests",
    ),
    Sweep(
        "notifications",
        15,
        "deliver due notifications (webhooks), retrying with backoff",
        queue="notifications",
        task_name="notifications.sweep",
    ),
    Sweep(
        "effects",
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


#: Each sweep's function, registered by `@sweep(name)` where it is written.
RUNS: Registry[SweepFunction] = Registry("sweep function", lambda: set(by_name()))


def sweep(name: str) -> Callable[[F], F]:
    """`@sweep("outbox")` on the function that sweeps it (refused for an undeclared name or
    a second function)."""

    def register(function: F) -> F:
        RUNS.add(name, function)
        return function

    return register
