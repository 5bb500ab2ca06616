"""Fleet-wide commands: run a sweep now, dead letters (list, replay), API keys, roles,
the identity provider's groups."""

from __future__ import annotations

import uuid
from typing import Any

import click

from orchestrator.cli.clickkit import RUN_ID, LazyChoice, actor_option, json_option
from orchestrator.cli.operators import operator_id
from orchestrator.cli.output import emit_json, listing, short, table, when
from orchestrator.config.sweep_registry import declared

# The service layer is imported inside each command: `--help` must not load the fleet.


def _sweep_names() -> tuple[str, ...]:
    """A declared sweep's name, or all: read from the declarations when click asks."""
    return (*(sweep.cli_name for sweep in declared()), "all")


@click.command("sweep")
@click.argument("name", type=LazyChoice(_sweep_names))
@json_option
def sweep_command(name: str, as_json: bool) -> None:
    """Run a sweep now, in this process (NAME: a sweep, or all). Safe beside beat's:
    every effect happens once."""
    from orchestrator.contracts.plain import jsonable
    from orchestrator.runtime import registrations as _registrations  # noqa: F401 (sweeps)

    chosen = [s for s in declared() if name in ("all", s.cli_name)]
    results = {s.cli_name: jsonable(s.function()()) for s in chosen}
    if as_json:
        emit_json(results)
        return
    for each, result in results.items():
        click.echo(f"{each:<15} {_summary(result)}")


def _summary(result: Any) -> str:
    if isinstance(result, dict):
        return ", ".join(f"{k} {v}" for k, v in result.items())
    return f"{result} handled"


# --- dead letters ------------------------------------------------------------------------


@click.group("dead-letters")
def dead_letters() -> None:
    """Jobs the lost-jobs sweep gave up on."""


@dead_letters.command("list")
@click.option("--run", "run_id", type=RUN_ID, help="Only this run's.")
@click.option("--tenant", help="Only this tenant's.")
@click.option("--all", "include_replayed", is_flag=True, help="Include replayed and resolved ones.")
@click.option("--limit", type=click.IntRange(1, 1000), default=100, show_default=True)
@json_option
def dead_letters_list(
    run_id: uuid.UUID | None, tenant: str | None, include_replayed: bool, limit: int, as_json: bool
) -> None:
    """List dead letters, newest first (pending ones only: neither replayed nor resolved,
    unless --all)."""
    from orchestrator.service.dead_letters import list_dead_letters

    letters = list_dead_letters(
        run_id=run_id, tenant_id=tenant, include_replayed=include_replayed, limit=limit
    )
    listing(
        letters,
        as_json,
        ["id", "job", "tenant", "queue", "at", "replayed", "resolved", "reason"],
        lambda d: [
            d.id,
            d.job_id,
            d.tenant_id,
            d.queue,
            when(d.created_at),
            when(d.replayed_at),
            when(d.resolved_at),
            # The last column is left ragged: room for the whole reason.
            short(d.reason.removeprefix(f"job {d.job_id} "), 200),
        ],
        "no dead letters",
        as_items=True,
    )


@dead_letters.command("replay")
@click.argument("letter_id", type=click.IntRange(min=1), metavar="ID")
@click.option("--reason", required=True, help="Why: kept in the audit trail.")
@click.option("--wait", type=click.FloatRange(0, 120), default=10.0, show_default=True)
@actor_option
@json_option
def dead_letters_replay(
    letter_id: int, reason: str, wait: float, actor: str | None, as_json: bool
) -> None:
    """Replay a dead letter: its step runs again as a new attempt."""
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.dead_letters import replay_dead_letter
    from orchestrator.service.fates import await_fate

    receipt = replay_dead_letter(letter_id, actor_id=operator_id(actor), reason=reason)
    receipt = await_fate(Actor(receipt.run.tenant_id, operator_id(actor)), receipt, wait)
    if as_json:
        emit_json({"dead_letter": letter_id, **receipt.model_dump(mode="json")})
    else:
        click.echo(
            f"replayed dead letter {letter_id}: retry {receipt.fate.value}; run "
            f"{receipt.run.id} {receipt.run.status} at {receipt.run.current_step}"
        )
    if receipt.fate.value in ("ignored", "rejected", "conflict"):
        raise click.ClickException(f"the run {receipt.fate.value} the retry: {receipt.reason}")


@dead_letters.command("resolve")
@click.argument("letter_id", type=click.IntRange(min=1), metavar="ID")
@click.option("--reason", required=True, help="How it was dealt with: kept on the letter.")
@actor_option
@json_option
def dead_letters_resolve(letter_id: int, reason: str, actor: str | None, as_json: bool) -> None:
    """Resolve a dead letter by hand: it stops being pending (its step's success resolves
    it on its own)."""
    from orchestrator.service.dead_letters import resolve_dead_letter

    letter = resolve_dead_letter(letter_id, actor_id=operator_id(actor), reason=reason)
    if as_json:
        emit_json(letter)
        return
    click.echo(
        f"resolved dead letter {letter.id} (job {letter.job_id}) at "
        f"{when(letter.resolved_at)} by {letter.resolved_by}"
    )


# --- API keys ------------------------------------------------------------------------------


@click.group("apikey")
def apikey() -> None:
    """Create, revoke and list API keys of the HTTP API."""


@apikey.command("create")
@click.option("--tenant", required=True, help="The one tenant the key acts for.")
@click.option("--principal", required=True, help="Who acts with it, e.g. user:ana@acme.example")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    required=True,
    help="read, signal, approve, operate or admin (repeat, or comma-list).",
)
@click.option(
    "--organization",
    "organizations",
    multiple=True,
    help="Limit the key to this organization (repeat for more).",
)
@click.option("--name", default="", help="A note saying what the key is for.")
@json_option
def apikey_create(
    tenant: str,
    principal: str,
    scopes: tuple[str, ...],
    organizations: tuple[str, ...],
    name: str,
    as_json: bool,
) -> None:
    """Create a key and print it once."""
    from orchestrator.service.apikeys import create_key

    chosen = [s.strip() for item in scopes for s in item.split(",") if s.strip()]
    view, key = create_key(
        tenant, principal, chosen, organizations=organizations or None, name=name
    )
    if as_json:
        emit_json({**view.model_dump(mode="json"), "key": key})
        return
    orgs = ", ".join(view.organizations) if view.organizations else "all"
    click.echo(
        f"key id         {view.key_id}\ntenant         {view.tenant_id}\n"
        f"principal      {view.principal}\nscopes         "
        f"{', '.join(s.value for s in view.scopes)}\norganizations  {orgs}"
    )
    click.echo("The key is shown this once; store it now:")
    click.echo(key)


@apikey.command("revoke")
@click.argument("key_id")
@json_option
def apikey_revoke(key_id: str, as_json: bool) -> None:
    """Revoke a key at once."""
    from orchestrator.service.apikeys import revoke_key

    view = revoke_key(key_id)
    if as_json:
        emit_json(view)
        return
    click.echo(
        f"revoked {view.key_id} ({view.principal}, tenant {view.tenant_id}) "
        f"at {when(view.revoked_at)}"
    )


@apikey.command("list")
@click.option("--tenant", help="Only this tenant's keys.")
@json_option
def apikey_list(tenant: str | None, as_json: bool) -> None:
    """List keys (never the keys themselves)."""
    from orchestrator.service.apikeys import list_keys

    keys = list_keys(tenant)
    if as_json:
        emit_json({"items": keys})
        return
    click.echo(
        table(
            ["key id", "tenant", "principal", "scopes", "state", "name"],
            [
                [
                    k.key_id,
                    k.tenant_id,
                    k.principal,
                    ",".join(s.value for s in k.scopes),
                    f"revoked {when(k.revoked_at)}" if k.revoked_at else "active",
                    k.name,
                ]
                for k in keys
            ],
        )
    )


# --- approver roles ------------------------------------------------------------------------


@click.group("role")
def role() -> None:
    """Grant, revoke and list the approver roles of principals (every change is audited)."""


def _role_change_line(change: Any) -> str:
    verb = change.action.value if change.changed else f"already {change.action.value}"
    held = ", ".join(change.roles) or "none"
    return (
        f"{verb}: {change.role} for {change.principal} (tenant {change.tenant_id}); "
        f"now holds: {held}"
    )


def _role_change_command(name: str, change_help: str, principal_help: str, doc: str) -> None:
    """`role grant` and `role revoke`: the same options, one service call each."""

    @role.command(name, help=doc)
    @click.option("--tenant", required=True, help="The tenant the principal acts for.")
    @click.option("--principal", required=True, help=principal_help)
    @click.option("--role", "role_name", required=True, help=change_help)
    @click.option("--reason", help="Why: kept in the audit trail.")
    @actor_option
    @json_option
    def command(
        tenant: str,
        principal: str,
        role_name: str,
        reason: str | None,
        actor: str | None,
        as_json: bool,
    ) -> None:
        from orchestrator.service.roles import grant_role, revoke_role

        change_role = grant_role if name == "grant" else revoke_role
        change = change_role(
            tenant, principal, role_name, actor_id=operator_id(actor), reason=reason
        )
        if as_json:
            emit_json(change)
            return
        click.echo(_role_change_line(change))


_role_change_command(
    "grant",
    "e.g. assessor, compliance_lead, ciso",
    "Who gets the role, e.g. user:ana@acme.example",
    "Grant a role; granting one already held changes nothing.",
)
_role_change_command(
    "revoke",
    "The role to revoke.",
    "Who loses the role.",
    "Revoke a role at once; approval events recorded later no longer carry it.",
)


def _change_row(event: Any, *what: Any) -> list[Any]:
    """An audited change as a table row: when, the action, `what` it changed, by whom, why."""
    return [
        when(event.created_at),
        event.action.value,
        *what,
        event.actor_id,
        short(event.reason or "", 60),
    ]


@role.command("list")
@click.option("--tenant", help="Only this tenant's.")
@click.option("--principal", help="Only this principal's.")
@click.option("--history", is_flag=True, help="Grants and revocations instead, newest first.")
@click.option(
    "--limit",
    type=click.IntRange(1, 1000),
    default=100,
    show_default=True,
    help="Most history entries shown.",
)
@json_option
def role_list(
    tenant: str | None, principal: str | None, history: bool, limit: int, as_json: bool
) -> None:
    """List the roles held (or, with --history, who granted and revoked what)."""
    from orchestrator.service.roles import list_grants, role_history

    if history:
        listing(
            role_history(tenant, principal, limit=limit),
            as_json,
            ["at", "action", "tenant", "principal", "role", "by", "reason"],
            lambda e: _change_row(e, e.tenant_id, e.principal, e.role),
            "no role changes",
            as_items=True,
        )
        return
    listing(
        list_grants(tenant, principal),
        as_json,
        ["tenant", "principal", "role", "granted by", "granted at"],
        lambda g: [g.tenant_id, g.principal, g.role, g.granted_by, when(g.granted_at)],
        "no roles granted",
        as_items=True,
    )


# --- the identity provider's groups -------------------------------------------------------


@click.group("oidc-group")
def oidc_group() -> None:
    """Map the identity provider's groups to roles and scopes: people who sign in to the
    console with the provider hold what their groups map to (every change is audited)."""


@oidc_group.command("map")
@click.option("--tenant", required=True, help="The tenant the group's members act for.")
@click.option("--group", required=True, help="The group as the provider names it.")
@click.option("--role", "role_name", required=True, help="e.g. approver, compliance_lead")
@click.option(
    "--scope",
    "scopes",
    multiple=True,
    default=("read",),
    show_default=True,
    help="What members may do in the console (repeat): read, signal, approve, operate, admin.",
)
@click.option("--reason", help="Why: kept in the audit trail.")
@actor_option
@json_option
def oidc_group_map(
    tenant: str,
    group: str,
    role_name: str,
    scopes: tuple[str, ...],
    reason: str | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Map a group to a role and scopes; mapping it again with other scopes replaces them."""
    from orchestrator.service.oidc_access import map_group

    change = map_group(tenant, group, role_name, scopes, actor_id=operator_id(actor), reason=reason)
    if as_json:
        emit_json(change)
        return
    verb = "mapped" if change.changed else "already mapped"
    granted = ", ".join(s.value for s in change.scopes)
    click.echo(f"{verb}: {change.group} -> {change.role} ({granted}) in tenant {change.tenant_id}")


@oidc_group.command("unmap")
@click.option("--tenant", required=True, help="The tenant of the mapping.")
@click.option("--group", required=True, help="The group as the provider names it.")
@click.option("--role", "role_name", required=True, help="The role to unmap.")
@click.option("--reason", help="Why: kept in the audit trail.")
@actor_option
@json_option
def oidc_group_unmap(
    tenant: str, group: str, role_name: str, reason: str | None, actor: str | None, as_json: bool
) -> None:
    """Unmap a group at once: members lose the role, and their sessions if nothing else maps."""
    from orchestrator.service.oidc_access import unmap_group

    change = unmap_group(tenant, group, role_name, actor_id=operator_id(actor), reason=reason)
    if as_json:
        emit_json(change)
        return
    click.echo(f"unmapped: {change.group} -> {change.role} in tenant {change.tenant_id}")


@oidc_group.command("list")
@click.option("--tenant", required=True, help="The tenant whose mappings are listed.")
@click.option("--history", is_flag=True, help="Mappings and unmappings instead, newest first.")
@json_option
def oidc_group_list(tenant: str, history: bool, as_json: bool) -> None:
    """List the groups mapped to roles (or, with --history, who changed what)."""
    from orchestrator.service.oidc_access import group_role_history, list_group_roles

    if history:
        listing(
            group_role_history(tenant),
            as_json,
            ["at", "action", "group", "role", "scopes", "by", "reason"],
            lambda e: _change_row(e, e.group, e.role, ",".join(s.value for s in e.scopes)),
            "no mapping changes",
            as_items=True,
        )
        return
    listing(
        list_group_roles(tenant),
        as_json,
        ["group", "role", "scopes", "mapped by", "mapped at"],
        lambda m: [
            m.group,
            m.role,
            ",".join(s.value for s in m.scopes),
            m.granted_by,
            when(m.granted_at),
        ],
        "no groups mapped",
        as_items=True,
    )
