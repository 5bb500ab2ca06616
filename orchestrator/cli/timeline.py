"""A run's history as one timeline: steps, waits, signals with their fate, jobs with
their attempts and deliveries, dead letters; then the audit trail, artifacts, approvals."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from orchestrator.cli.output import between, short, span, table, when
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.plain import jsonable
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.service.dead_letters import DeadLetterView, list_dead_letters
from orchestrator.service.producer import get_run
from orchestrator.service.queries import (
    list_approvals,
    list_artifacts,
    list_audit,
    list_jobs,
    list_signals,
    list_steps,
)
from orchestrator.service.read_models import (
    ApprovalRecordView,
    ArtifactView,
    AuditEventView,
    JobView,
    RunView,
    SignalView,
    StepView,
)

_WAITS = (StepKind.WAIT_FOR_INPUT, StepKind.WAIT_FOR_APPROVAL)


@dataclass(frozen=True)
class RunHistory:
    run: RunView
    steps: list[StepView]
    signals: list[SignalView]
    jobs: list[JobView]
    audit: list[AuditEventView]
    artifacts: list[ArtifactView]
    approvals: list[ApprovalRecordView]
    dead_letters: list[DeadLetterView]


@dataclass(frozen=True)
class Entry:
    at: datetime
    kind: str
    """step, wait, signal, job or dead_letter."""
    subject: str
    state: str
    detail: str


def load_history(actor: Actor, run_id: uuid.UUID) -> RunHistory:
    signals: list[SignalView] = []
    cursor: str | None = None
    while True:  # every page: an operator reads the whole history
        page = list_signals(actor, run_id, limit=200, cursor=cursor)
        signals += page.items
        if (cursor := page.next_cursor) is None:
            break
    audit: list[AuditEventView] = []
    cursor = None
    while True:
        events = list_audit(actor, run_id, limit=200, cursor=cursor)
        audit += events.items
        if (cursor := events.next_cursor) is None:
            break
    return RunHistory(
        run=get_run(actor, run_id),
        steps=list_steps(actor, run_id),
        signals=signals,
        jobs=list_jobs(actor, run_id),
        audit=audit,
        artifacts=list_artifacts(actor, run_id),
        approvals=list_approvals(actor, run_id),
        dead_letters=list_dead_letters(run_id=run_id, include_replayed=True),
    )


def timeline(history: RunHistory) -> list[Entry]:
    entries = [_step_entry(s) for s in history.steps]
    entries += [_signal_entry(s) for s in history.signals]
    entries += [_job_entry(j) for j in history.jobs]
    entries += [
        Entry(
            d.created_at,
            "dead_letter",
            d.job_id,
            "resolved" if d.resolved_at else "replayed" if d.replayed_at else "pending",
            f"#{d.id} {short(d.reason.removeprefix(f'job {d.job_id} '), 160)}",
        )
        for d in history.dead_letters
    ]
    return sorted(entries, key=lambda e: e.at)


def _step_entry(step: StepView) -> Entry:
    waits = _is_wait(step.step)
    took = span(between(step.started_at, step.finished_at))
    detail = f"{'waited' if waits else 'took'} {took}" if step.finished_at else ""
    if step.error:
        detail = f"{detail}  error: {short(step.error, 100)}".strip()
    return Entry(
        step.started_at,
        "wait" if waits else "step",
        f"{step.step} #{step.attempt}",
        step.status,
        detail,
    )


def _is_wait(step: str) -> bool:
    try:
        return STEP_SPECS[Step(step)].kind in _WAITS
    except ValueError:
        return False


def _signal_entry(signal: SignalView) -> Entry:
    detail = f"by {signal.actor_id}  key {signal.idempotency_key}"
    if signal.reason:
        detail += f"  reason: {short(signal.reason, 100)}"
    return Entry(signal.received_at, "signal", signal.type, signal.fate.value, detail)


def _job_entry(job: JobView) -> Entry:
    detail = (
        f"{job.kind} on {job.queue}, {job.deliveries} deliver"
        f"{'y' if job.deliveries == 1 else 'ies'}"
    )
    took = between(job.started_at, job.finished_at)
    if took is not None:
        detail += f", took {span(took)}"
    if job.error:
        # The subject names the job: its message is shown from what follows its id.
        message = str(job.error.get("message")).removeprefix(f"job {job.id} ")
        detail += f"  error: {job.error.get('code')}: {short(message, 160)}"
    return Entry(
        job.created_at, "job", f"{job.step} attempt {job.step_attempt}", job.status, detail
    )


def _ref(origin_ref: str | None) -> str:
    return f" ({origin_ref})" if origin_ref else ""


def _pin(context: dict[str, Any]) -> str:
    pin = context.get("definition") or {}
    content_hash = pin.get("hash")
    return f"v{pin.get('version') or 1}" + (f" {content_hash[:12]}" if content_hash else "")


def render(history: RunHistory, *, audit: bool = True) -> str:
    run = history.run
    lines = [
        f"Run {run.id}",
        f"  status     {run.status} at {run.current_step or '-'}",
        *([f"  reason     {run.reason}"] if run.reason else []),
        f"  tenant     {run.tenant_id} / {run.organization_id}",
        f"  assessment {run.assessment_id}",
        f"  trace      {run.trace_id}",
        f"  started    by {run.origin or 'unrecorded'}{_ref(run.origin_ref)}, acts for "
        f"{(run.authority or {}).get('principal', 'unrecorded')}",
        f"  definition {_pin(run.context)}",
        f"  created    {when(run.created_at)}   updated {when(run.updated_at)}"
        f"   version {run.version}",
        "",
        "Timeline",
        _indent(
            table(
                ["at", "what", "subject", "state", "detail"],
                [
                    [when(e.at), e.kind.upper(), e.subject, e.state, e.detail]
                    for e in timeline(history)
                ],
            )
        ),
    ]
    if history.artifacts:
        lines += [
            "",
            "Artifacts",
            _indent(
                table(
                    ["kind", "version", "status", "created", "by job"],
                    [
                        [a.kind, a.version, a.status, when(a.created_at), a.created_by_job_id]
                        for a in history.artifacts
                    ],
                )
            ),
        ]
    if history.approvals:
        lines += [
            "",
            "Approvals",
            _indent(
                table(
                    ["artifact", "decision", "approver", "roles", "at", "used by signal"],
                    [
                        [
                            f"{a.artifact_kind} v{a.artifact_version}",
                            a.decision,
                            a.approver_id,
                            ",".join(a.approver_roles),
                            when(a.created_at),
                            a.consumed_by_signal_id or "-",
                        ]
                        for a in history.approvals
                    ],
                )
            ),
        ]
    if audit and history.audit:
        lines += [
            "",
            f"Audit trail ({len(history.audit)} events)",
            _indent(
                table(
                    ["at", "event", "step", "actor", "details"],
                    [
                        [
                            when(e.created_at),
                            e.event_type,
                            e.step or "",
                            e.actor_id,
                            short(_details(e.metadata), 90),
                        ]
                        for e in history.audit
                    ],
                )
            ),
        ]
    return "\n".join(lines)


def _details(metadata: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in metadata.items())


def _indent(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def history_json(history: RunHistory) -> dict[str, Any]:
    body: dict[str, Any] = jsonable(history)
    body["timeline"] = jsonable(timeline(history))
    return body
