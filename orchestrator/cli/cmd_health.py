"""`lifecycle health`: the fleet's health report, as `GET /health` gives it."""

from __future__ import annotations

import click

from orchestrator.cli.clickkit import json_option
from orchestrator.cli.output import emit_json, table, when


@click.command("health")
@json_option
def health_command(as_json: bool) -> None:
    """Database, broker, a worker on every queue, and beat with its last sweep time;
    exit 1 when any of them is unhealthy."""
    from orchestrator.api.health import health_report

    report = health_report()
    if as_json:
        emit_json(report)
    else:
        for name, check in report.checks.items():
            click.echo(f"{name:<9} {'ok' if check.ok else 'FAILING'}  {check.detail}")
        beat = report.checks["beat"]
        sweeps = getattr(beat, "sweeps", None) or []
        if sweeps:
            click.echo(f"\nbeat's last sweep: {when(getattr(beat, 'last_sweep_at', None))}")
            rows = [
                [s.task, f"{s.every_s:g} s", s.runs, when(s.last_started_at), s.overdue]
                for s in sweeps
            ]
            click.echo(table(["sweep", "every", "runs", "last started", "overdue"], rows))
    if report.status != "healthy":
        raise click.ClickException("the fleet is unhealthy")
