"""`lifecycle quality`: how far the evidence proposals can be trusted, as measured on the
labelled corpora and as a tenant's reviewers decided."""

from __future__ import annotations

import click

from orchestrator.cli.clickkit import json_option
from orchestrator.cli.output import emit_json, table


def _figure(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@click.command("quality")
@click.option("--tenant", required=True, help="Whose reviewers' decisions to measure.")
@json_option
def quality_command(tenant: str, as_json: bool) -> None:
    """Precision of "evidence found" and kappa: shipped (labelled corpora) and the
    tenant's own (every status a reviewer set on a proposed SoA row)."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.proposal_quality import tenant_quality

    view = tenant_quality(Actor(tenant_id=tenant, actor_id="operator:quality"))
    if as_json:
        emit_json(view)
        return
    shipped = view.shipped
    click.echo(f"measured on the labelled corpora ({shipped['model']}, {shipped['catalog']}):")
    click.echo(
        table(
            ["corpus", "framework", "precision found", "recall found", "kappa", "R@10"],
            [
                [
                    c["corpus"],
                    c["framework"],
                    _figure(c["precision_found"]),
                    _figure(c["recall_found"]),
                    _figure(c["kappa"]),
                    _figure(c["recall_at_10"]),
                ]
                for c in shipped["corpora"]
            ],
        )
    )
    click.echo(f"\ntenant {tenant}, from its reviewers' decisions:")
    if not view.tenant:
        click.echo("no decided rows yet")
    else:
        click.echo(
            table(
                ["framework", "decided", "found", "confirmed", "abstained", "precision", "kappa"],
                [
                    [
                        f.framework,
                        f.decided,
                        f.found,
                        f.found_confirmed,
                        f.abstained,
                        _figure(f.precision_found),
                        _figure(f.kappa),
                    ]
                    for f in view.tenant
                ],
            )
        )
    for warning in view.warnings:
        click.echo(f"warning: {warning}")
