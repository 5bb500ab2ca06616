"""`lifecycle verify RUN`: recompute each approval's seal and name what changed since."""

from __future__ import annotations

import uuid

import click

from orchestrator.cli.clickkit import RUN_ID, json_option
from orchestrator.cli.operators import operator_for
from orchestrator.cli.output import emit_json, table, when


@click.command("verify")
@click.argument("run_id", type=RUN_ID)
@json_option
def verify_command(run_id: uuid.UUID, as_json: bool) -> None:
    """Check that every approval still holds what it approved: the artifact's content and
    each cited document version. Exits 1 naming anything changed since the approval."""
    from orchestrator.service.seal_verification import verify_run

    result = verify_run(operator_for(run_id), run_id)
    if as_json:
        emit_json(result)
    else:
        rows = [
            [
                f"{a.artifact_kind} v{a.artifact_version}",
                a.approver_id,
                when(a.approved_at),
                len(a.cited_documents),
                "unsealed" if a.content_sha256 is None else ("changed" if a.changes else "holds"),
            ]
            for a in result.approvals
        ]
        if rows:
            click.echo(table(["approved", "by", "at", "documents", "seal"], rows))
        else:
            click.echo("no approvals to verify")
        for change in result.changes():
            click.echo(f"changed: {change}")
        if result.unsealed:
            click.echo(f"{result.unsealed} approval(s) recorded before approvals were sealed")
    if not result.verified:
        raise SystemExit(1)
