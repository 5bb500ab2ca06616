"""`lifecycle export-target ...`: where a tenant's published drafts go."""

from __future__ import annotations

import uuid

import click

from orchestrator.cli.clickkit import LazyChoice, artifact_kinds
from orchestrator.cli.output import emit_json, table, when

# The fleet is imported inside each command: `--help` must not load it.


_TENANT = click.option("--tenant", required=True, help="The tenant whose targets these are.")


@click.group("export-target")
def export_target() -> None:
    """Where a tenant's published drafts (the report) are POSTed."""


@export_target.command("add")
@click.argument("url")
@_TENANT
@click.option(
    "--kind",
    "kinds",
    multiple=True,
    type=LazyChoice(artifact_kinds),
    help="Only drafts of this kind (repeatable; default: every kind published).",
)
@click.option(
    "--idempotent", is_flag=True, help="The target stores a publication once per Idempotency-Key."
)
@click.option("--secret", help="The signing secret (default: a random one, printed once).")
def add_command(
    url: str, tenant: str, kinds: tuple[str, ...], idempotent: bool, secret: str | None
) -> None:
    """Publish the tenant's drafts to URL."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.notifications.export_targets import add_export_target

    actor = Actor(tenant, "operator")
    view = add_export_target(
        actor, url, artifact_kinds=list(kinds), idempotent=idempotent, secret=secret
    )
    emit_json(view)


@export_target.command("list")
@_TENANT
def list_command(tenant: str) -> None:
    """The tenant's export targets (never their secrets)."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.notifications.export_targets import list_export_targets

    views = list_export_targets(Actor(tenant, "operator"))
    rows = [
        [
            v.id,
            v.url,
            ",".join(v.artifact_kinds) or "all",
            v.idempotent,
            v.active,
            when(v.created_at),
        ]
        for v in views
    ]
    click.echo(table(["target", "url", "kinds", "idempotent", "active", "added"], rows))


@export_target.command("deactivate")
@click.argument("target_id", type=click.UUID)
@_TENANT
def deactivate_command(target_id: uuid.UUID, tenant: str) -> None:
    """No new publications go there (retractions of what it holds still do)."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.notifications.export_targets import deactivate_export_target

    view = deactivate_export_target(Actor(tenant, "operator"), target_id)
    click.echo(f"export target {view.id} deactivated")
