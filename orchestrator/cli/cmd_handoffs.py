"""`lifecycle handoff ...`, `lifecycle effects RUN` and `lifecycle adopt RUN`: effects
outside the database, the handoffs where an operator decides their fate, and taking over
a run's authority (docs/engine.md)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import click

from orchestrator.cli.clickkit import RUN_ID, LazyChoice, actor_option, json_option
from orchestrator.cli.operators import operator_for, operator_in
from orchestrator.cli.output import emit_json, listing, short, when

# The fleet is imported inside each command: `--help` must not load it.
if TYPE_CHECKING:
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.handoffs import HandoffView


def _actions() -> list[str]:
    from orchestrator.contracts.external_effects import HandoffAction

    return [a.value for a in HandoffAction]


def _operator_of_handoff(handoff_id: uuid.UUID, actor: str | None = None) -> Actor:
    from orchestrator.service.operator_lookups import tenant_of_handoff

    return operator_in(tenant_of_handoff(handoff_id), actor)


def _print(view: HandoffView, as_json: bool) -> None:
    if as_json:
        emit_json(view)
        return
    click.echo(f"handoff {view.id}: {view.status} ({view.reason})")
    click.echo(f"  run       {view.run_id}   owner {view.owner}")
    click.echo(f"  effect    {view.effect_kind} {view.effect_id}")
    click.echo(f"  detail    {view.detail}")
    click.echo(f"  actions   {', '.join(view.allowed_actions)}")
    claim = f"{view.claimed_by} until {when(view.claimed_until)}" if view.claimed_by else "-"
    click.echo(f"  fence     {view.fence}   claimed {claim}")
    if view.resolved_by:
        click.echo(f"  resolved  {view.action} by {view.resolved_by} at {when(view.resolved_at)}")
        click.echo(f"  evidence  {view.evidence_ref or '-'}   comment {view.comment or '-'}")


@click.group("handoff")
def handoff() -> None:
    """Effects outside the database whose fate an operator decides."""


@handoff.command("list")
@click.option("--tenant", help="Only this tenant's handoffs.")
@click.option("--run", "run_id", type=RUN_ID, help="Only this run's (open and resolved).")
@click.option("--all", "show_all", is_flag=True, help="Resolved ones too.")
@json_option
def list_command(
    tenant: str | None, run_id: uuid.UUID | None, show_all: bool, as_json: bool
) -> None:
    """Open handoffs, newest first (all tenants unless --tenant)."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.handoffs import list_handoffs
    from orchestrator.service.operator_lookups import tenants_with_handoffs

    status = None if show_all or run_id else "open"
    if run_id is not None:
        views = list_handoffs(operator_for(run_id), status=None, run_id=run_id)
    else:
        tenants = [tenant] if tenant else tenants_with_handoffs()
        views = [v for t in tenants for v in list_handoffs(Actor(t, "operator"), status=status)]
    listing(
        views,
        as_json,
        ["handoff", "status", "reason", "effect", "run", "owner", "detail"],
        lambda v: [v.id, v.status, v.reason, v.effect_kind, v.run_id, v.owner, short(v.detail, 60)],
        "no handoffs",
    )


@handoff.command("show")
@click.argument("handoff_id", type=click.UUID)
@json_option
def show_command(handoff_id: uuid.UUID, as_json: bool) -> None:
    """One handoff: the effect, why it waits, the actions allowed, who claimed it."""
    from orchestrator.service.handoffs import get_handoff

    _print(get_handoff(_operator_of_handoff(handoff_id), handoff_id), as_json)


@handoff.command("claim")
@click.argument("handoff_id", type=click.UUID)
@actor_option
@json_option
def claim_command(handoff_id: uuid.UUID, actor: str | None, as_json: bool) -> None:
    """Hold the handoff (others are refused meanwhile); prints the fence to resolve with."""
    from orchestrator.service.handoffs import claim_handoff

    _print(claim_handoff(_operator_of_handoff(handoff_id, actor), handoff_id), as_json)


@handoff.command("resolve")
@click.argument("handoff_id", type=click.UUID)
@click.option("--action", required=True, type=LazyChoice(_actions), help="What to do.")
@click.option("--evidence", "evidence_ref", help="Where the evidence is (ticket, record id).")
@click.option("--comment", help="Why (an evidence reference or a comment is required).")
@click.option("--fence", type=click.IntRange(0), help="The fence of your claim.")
@actor_option
@json_option
def resolve_command(
    handoff_id: uuid.UUID,
    action: str,
    evidence_ref: str | None,
    comment: str | None,
    fence: int | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Resolve a handoff once: confirm_effect, confirm_absent, retry or cancel."""
    from orchestrator.service.handoffs import resolve_handoff

    who = _operator_of_handoff(handoff_id, actor)
    view = resolve_handoff(
        who, handoff_id, action, evidence_ref=evidence_ref, comment=comment, fence=fence
    )
    _print(view, as_json)


@click.command("effects")
@click.argument("run_id", type=RUN_ID)
@json_option
def effects_command(run_id: uuid.UUID, as_json: bool) -> None:
    """A run's effects outside the database: publications and their undoing."""
    from orchestrator.service.effect_views import list_effects

    listing(
        list_effects(operator_for(run_id), run_id),
        as_json,
        ["effect", "kind", "of", "status", "tries", "undo", "error"],
        lambda e: [
            e.id,
            e.kind,
            f"{e.artifact_kind} v{e.artifact_version}" if e.artifact_kind else "-",
            e.status,
            e.attempts,
            e.undo_reason or "-",
            short(e.last_error, 50),
        ],
        "no effects outside the database",
    )


@click.command("adopt")
@click.argument("run_id", type=RUN_ID)
@click.option("--reason", required=True, help="Why: kept in the audit trail.")
@actor_option
@json_option
def adopt_command(run_id: uuid.UUID, reason: str, actor: str | None, as_json: bool) -> None:
    """Act for the run from now on (after its starter's key was revoked, say)."""
    from orchestrator.service.adoption import adopt_run
    from orchestrator.service.authority import RunAuthority

    who = operator_for(run_id, actor)
    authority = adopt_run(who, run_id, reason=reason, authority=RunAuthority.of_actor(who))
    if as_json:
        emit_json(authority)
        return
    click.echo(f"run {run_id} now acts for {authority.principal}")
