"""Commands that change a run: retry, reprocess (with --dry-run), new-version, cancel,
block, resume. Each is a signal with a reason and an idempotency key, recorded through
orchestrator.service.operations; the command waits (--wait) for the coordinator's verdict."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from orchestrator.cli.clickkit import (
    RUN_ID,
    LazyChoice,
    actor_option,
    artifact_kinds,
    json_option,
)
from orchestrator.cli.operators import new_key, operator_for
from orchestrator.cli.output import emit_json

# The fleet is imported inside each command: `--help` must not load it.
if TYPE_CHECKING:
    from orchestrator.contracts.identity import Actor
    from orchestrator.lifecycle.rewind import RewindPlan
    from orchestrator.service.read_models import SignalReceipt


def _steps() -> list[str]:
    from orchestrator.contracts.steps import STEP_ORDER

    return [s.value for s in STEP_ORDER]


def _common(function: Callable[..., Any]) -> Callable[..., Any]:
    function = click.option("--reason", required=True, help="Why: kept in the audit trail.")(
        function
    )
    function = click.option(
        "--key",
        default=None,
        metavar="KEY",
        help="Idempotency key: the same key repeats nothing (default: a fresh one, printed).",
    )(function)
    function = click.option(
        "--wait",
        type=click.FloatRange(0, 120),
        default=10.0,
        show_default=True,
        help="Seconds to wait for the coordinator's verdict.",
    )(function)
    return json_option(actor_option(function))


def _send(
    command: str,
    run_id: uuid.UUID,
    actor_name: str | None,
    key: str | None,
    wait: float,
    as_json: bool,
    send: Callable[[Actor, str], Any],
) -> None:
    from orchestrator.service.fates import await_fate

    actor = operator_for(run_id, actor_name)
    key = key or new_key(command, run_id)
    receipt = await_fate(actor, send(actor, key), wait)
    _report(command, key, receipt, as_json)


def _report(command: str, key: str, receipt: SignalReceipt, as_json: bool) -> None:
    from orchestrator.contracts.signals import SignalFate

    # Fates after which the command did nothing: the exit status says so.
    refused = (SignalFate.IGNORED, SignalFate.REJECTED, SignalFate.CONFLICT)
    if as_json:
        emit_json({"command": command, "idempotency_key": key, **receipt.model_dump(mode="json")})
    else:
        run = receipt.run
        fate = receipt.fate.value + (
            " (a repeat of an earlier command)" if receipt.duplicate else ""
        )
        click.echo(f"{command} of run {run.id}: {fate}")
        if receipt.reason:
            click.echo(f"  reason  {receipt.reason}")
        click.echo(f"  signal  {receipt.signal_id}  key {key}")
        click.echo(f"  run     {run.status} at {run.current_step or '-'}")
        if receipt.fate is SignalFate.PENDING:
            click.echo("  the coordinator has not decided yet: `lifecycle show` tells later")
    if receipt.fate in refused:
        raise click.ClickException(
            f"the run {receipt.fate.value} the {command}: {receipt.reason or 'no reason given'}"
        )


@click.command("retry")
@click.argument("run_id", type=RUN_ID)
@_common
def retry_command(
    run_id: uuid.UUID, reason: str, key: str | None, wait: float, actor: str | None, as_json: bool
) -> None:
    """Run a failed run's failed step again, as a new attempt."""
    from orchestrator.service import operations

    _send(
        "retry",
        run_id,
        actor,
        key,
        wait,
        as_json,
        lambda who, k: operations.retry_step(who, run_id, reason=reason, idempotency_key=k),
    )


@click.command("reprocess")
@click.argument("run_id", type=RUN_ID)
@click.argument("step", type=LazyChoice(_steps), metavar="STEP")
@click.option(
    "--new-version",
    is_flag=True,
    help="Allow drafting new versions of approvable artifacts (scope, SoA, ...).",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Only print what would be superseded: steps, artifacts, approvals.",
)
@_common
def reprocess_command(
    run_id: uuid.UUID,
    step: str,
    new_version: bool,
    dry_run: bool,
    reason: str,
    key: str | None,
    wait: float,
    actor: str | None,
    as_json: bool,
) -> None:
    """Rewind a run to STEP: downstream work is superseded and its approvals are
    collected again."""
    from orchestrator.lifecycle.rewind import RewindPlan
    from orchestrator.service import operations

    if dry_run:
        who = operator_for(run_id, actor)
        plan = operations.reprocess_step(
            who,
            run_id,
            step,
            reason=reason,
            idempotency_key=key or "dry-run",
            new_version=new_version,
            dry_run=True,
        )
        assert isinstance(plan, RewindPlan)
        _print_plan(run_id, plan, as_json)
        return
    _send(
        "reprocess",
        run_id,
        actor,
        key,
        wait,
        as_json,
        lambda who, k: operations.reprocess_step(
            who, run_id, step, reason=reason, idempotency_key=k, new_version=new_version
        ),
    )


def _print_plan(run_id: uuid.UUID, plan: RewindPlan, as_json: bool) -> None:
    if as_json:
        emit_json({"dry_run": True, "run_id": str(run_id), **plan.to_json()})
        return
    steps = [s.value for s in plan.superseded_steps]
    artifacts = [f"{kind.value} v{version}" for kind, version in plan.superseded_artifacts]
    approvals = [k.value for k in plan.approvals_to_collect_again]
    drafts = [k.value for k in plan.new_versions]
    click.echo(f"dry run: reprocessing {plan.target.value} of run {run_id} would")
    click.echo("  supersede steps:         " + (", ".join(steps) or "none"))
    click.echo("  supersede artifacts:     " + (", ".join(artifacts) or "none"))
    click.echo("  collect approvals again: " + (", ".join(approvals) or "none"))
    click.echo("  draft new versions of:   " + (", ".join(drafts) or "none"))
    click.echo("nothing was changed")


@click.command("new-version")
@click.argument("run_id", type=RUN_ID)
@click.argument("artifact_kind", type=LazyChoice(artifact_kinds), metavar="ARTIFACT_KIND")
@_common
def new_version_command(
    run_id: uuid.UUID,
    artifact_kind: str,
    reason: str,
    key: str | None,
    wait: float,
    actor: str | None,
    as_json: bool,
) -> None:
    """Draft a new version of an artifact (after a reviewer sent it back)."""
    from orchestrator.service import operations

    _send(
        "new-version",
        run_id,
        actor,
        key,
        wait,
        as_json,
        lambda who, k: operations.request_new_version(
            who, run_id, artifact_kind, reason=reason, idempotency_key=k
        ),
    )


def _control(name: str, action: str, help_text: str) -> click.Command:
    """A command sending one signal through `orchestrator.service.operations.<action>`."""

    @click.command(name, help=help_text)
    @click.argument("run_id", type=RUN_ID)
    @_common
    def command(
        run_id: uuid.UUID,
        reason: str,
        key: str | None,
        wait: float,
        actor: str | None,
        as_json: bool,
    ) -> None:
        from orchestrator.service import operations

        send: Callable[..., SignalReceipt] = getattr(operations, action)
        _send(
            name,
            run_id,
            actor,
            key,
            wait,
            as_json,
            lambda who, k: send(who, run_id, reason=reason, idempotency_key=k),
        )

    return command


cancel_command = _control("cancel", "cancel_run", "Cancel a run (terminal).")
block_command = _control("block", "block_run", "Block a run for manual intervention.")
resume_command = _control("resume", "resume_run", "Resume a blocked run where it stood.")


@click.command("migrate")
@click.argument("run_id", type=RUN_ID)
@click.option("--to", "to_version", required=True, type=click.IntRange(1), help="Version.")
@_common
def migrate_command(
    run_id: uuid.UUID,
    to_version: int,
    reason: str,
    key: str | None,
    wait: float,
    actor: str | None,
    as_json: bool,
) -> None:
    """Move a run to another shipped lifecycle definition that declares a migration from
    the run's (while it waits, is blocked or failed)."""
    from orchestrator.service import operations

    _send(
        "migrate",
        run_id,
        actor,
        key,
        wait,
        as_json,
        lambda who, k: operations.migrate_definition(
            who, run_id, to_version, reason=reason, idempotency_key=k
        ),
    )
