"""`lifecycle list` and `lifecycle show`: find runs and read one's whole history."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

import click

from orchestrator.cli.clickkit import RUN_ID, LazyChoice, json_option
from orchestrator.cli.operators import operator_for
from orchestrator.cli.output import between, emit_json, short, span, table, when

# The fleet is imported inside each command: `--help` must not load it.
if TYPE_CHECKING:
    from orchestrator.service.queries import KeysetPage, RunFilter
    from orchestrator.service.read_models import RunView


def _statuses() -> list[str]:
    from orchestrator.contracts.statuses import WorkflowStatus

    return [s.value for s in WorkflowStatus]


def _steps() -> list[str]:
    from orchestrator.contracts.steps import STEP_ORDER

    return [s.value for s in STEP_ORDER]


@click.command("list")
@click.option("--tenant", help="Only this tenant's runs (needed to page with --cursor).")
@click.option("--status", type=LazyChoice(_statuses), help="Only runs in this status.")
@click.option("--step", type=LazyChoice(_steps), help="Only runs at this step.")
@click.option(
    "--waiting-for-approval/--not-waiting-for-approval",
    default=None,
    help="Only runs waiting (or not waiting) for an approval.",
)
@click.option("--assessment", type=click.UUID, help="Only runs of this assessment.")
@click.option("--limit", type=click.IntRange(1, 200), default=50, show_default=True)
@click.option("--cursor", help="next_cursor of the previous page (with --tenant).")
@json_option
def list_command(
    tenant: str | None,
    status: str | None,
    step: str | None,
    waiting_for_approval: bool | None,
    assessment: uuid.UUID | None,
    limit: int,
    cursor: str | None,
    as_json: bool,
) -> None:
    """List runs, newest first."""
    from orchestrator.contracts.clock import utcnow
    from orchestrator.contracts.statuses import WorkflowStatus
    from orchestrator.service.queries import RunFilter

    if cursor and not tenant:
        raise click.UsageError("--cursor pages one tenant's runs: give --tenant too")
    filters = RunFilter(
        status=WorkflowStatus(status) if status else None,
        step=step,
        waiting_for_approval=waiting_for_approval,
        assessment_id=assessment,
    )
    page = _runs(tenant, filters, limit, cursor)
    if as_json:
        emit_json({"items": page.items, "next_cursor": page.next_cursor})
        return
    if not page.items:
        click.echo("no runs match")
        return
    now = utcnow()
    click.echo(
        table(
            ["run", "tenant", "status", "step", "updated", "idle", "reason"],
            [
                [
                    r.id,
                    r.tenant_id,
                    r.status,
                    r.current_step or "-",
                    when(r.updated_at),
                    span(between(r.updated_at, now)),
                    short(r.reason, 50),
                ]
                for r in page.items
            ],
        )
    )
    if page.next_cursor:
        click.echo(f"\nmore: --tenant {tenant} --cursor {page.next_cursor}")


def _runs(
    tenant: str | None, filters: RunFilter, limit: int, cursor: str | None
) -> KeysetPage[RunView]:
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.operator_lookups import tenants_with_runs
    from orchestrator.service.queries import KeysetPage, list_runs

    if tenant:
        return list_runs(Actor(tenant, "operator"), filters, limit=limit, cursor=cursor)
    tenants = tenants_with_runs()
    runs: list[RunView] = []
    for each in tenants:  # every tenant's newest `limit`, then the newest of those
        runs += list_runs(Actor(each, "operator"), filters, limit=limit).items
    runs.sort(key=lambda r: (r.created_at, str(r.id)), reverse=True)
    return KeysetPage(runs[:limit], None)


@click.command("show")
@click.argument("run_id", type=RUN_ID)
@click.option(
    "--audit/--no-audit", default=True, show_default=True, help="Include the audit trail."
)
@json_option
def show_command(run_id: uuid.UUID, audit: bool, as_json: bool) -> None:
    """Show a run: status, a timeline of steps, waits, signals (with their fate), jobs
    (with attempts), dead letters, then artifacts, approvals and the audit trail."""
    from orchestrator.cli.timeline import history_json, load_history, render

    history = load_history(operator_for(run_id), run_id)
    if as_json:
        body: dict[str, Any] = history_json(history)
        if not audit:
            body.pop("audit", None)
        emit_json(body)
        return
    click.echo(render(history, audit=audit))
