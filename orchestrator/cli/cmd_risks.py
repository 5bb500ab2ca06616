"""`lifecycle risks ...`: an organisation's risk register (ISO/IEC 27001 6.1.2, 6.1.3),
reached through any of its assessments: list, show, history, add, revise, accept, export;
and `risks proposals ...`, the risks gap findings proposed: list, show, accept, merge, reject."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from orchestrator.cli.clickkit import LazyChoice, actor_option, json_option
from orchestrator.cli.operators import operator_in
from orchestrator.cli.output import emit_json, short, table, when

# The fleet is imported inside each command: `--help` must not load it.
if TYPE_CHECKING:
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.risks import RequirementRef, RiskContent, RiskVersionView


def _treatments() -> list[str]:
    from orchestrator.contracts.risk_method import TreatmentOption

    return [option.value for option in TreatmentOption]


def _for_assessment(assessment_id: uuid.UUID, actor: str | None = None) -> Actor:
    from orchestrator.service.operator_lookups import tenant_of_assessment

    return operator_in(tenant_of_assessment(assessment_id), actor)


def _for_risk(risk_id: uuid.UUID, actor: str | None = None) -> Actor:
    from orchestrator.service.operator_lookups import tenant_of_risk

    return operator_in(tenant_of_risk(risk_id), actor)


def _print(view: RiskVersionView, as_json: bool) -> None:
    if as_json:
        emit_json(view)
        return
    click.echo(f"risk {view.risk_id} v{view.version} ({view.change}): {view.title}")
    click.echo(f"  asset      {view.asset}")
    click.echo(f"  threat     {view.threat}")
    click.echo(f"  weakness   {view.vulnerability}")
    click.echo(
        f"  rating     likelihood {view.likelihood} x impact {view.impact} = {view.score} "
        f"({view.level})"
    )
    click.echo(f"  owner      {view.owner}   treatment {view.treatment}")
    click.echo(f"  controls   {', '.join(view.controls) or '-'}")
    refs = ", ".join(f"{r.framework} {r.requirement_id}" for r in view.requirements)
    click.echo(f"  requires   {refs or '-'}")
    if view.residual_score is not None:
        click.echo(f"  residual   {view.residual_score} ({view.residual_level})")
    if view.accepted_by:
        click.echo(f"  accepted   by {view.accepted_by} at {when(view.accepted_at)}")
    click.echo(f"  changed    by {view.actor_id} at {when(view.created_at)}")


def _content_options(function: Any) -> Any:
    """The options that state a risk (all required: each version holds all of it)."""
    options = [
        click.option("--title", required=True),
        click.option("--asset", required=True, help="The asset or process at risk."),
        click.option("--threat", required=True),
        click.option("--vulnerability", required=True, help="The weakness exploited."),
        click.option("--likelihood", required=True, type=click.IntRange(1, 5)),
        click.option("--impact", required=True, type=click.IntRange(1, 5)),
        click.option("--owner", required=True, help="The person who owns the risk."),
        click.option("--treatment", required=True, type=LazyChoice(_treatments)),
        click.option("--plan", "treatment_plan", default="", help="The treatment plan."),
        click.option("--control", "controls", multiple=True, help="An SCF control id."),
        click.option(
            "--requirement",
            "requirements",
            multiple=True,
            metavar="FRAMEWORK=ID",
            help='A framework requirement, e.g. "ISO/IEC 27001:2022=A.8.1".',
        ),
        click.option("--residual-likelihood", type=click.IntRange(1, 5)),
        click.option("--residual-impact", type=click.IntRange(1, 5)),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _requirement_refs(given: Iterable[str]) -> list[RequirementRef]:
    """`--requirement FRAMEWORK=ID` values, each split at its last `=`."""
    from orchestrator.service.risks import RequirementRef

    refs = []
    for value in given:
        framework, sep, requirement_id = str(value).rpartition("=")
        if not sep or not framework or not requirement_id:
            raise click.BadParameter(
                f"{value!r}: expected FRAMEWORK=ID", param_hint="--requirement"
            )
        refs.append(RequirementRef(framework=framework, requirement_id=requirement_id))
    return refs


def _content(values: dict[str, Any]) -> RiskContent:
    from orchestrator.service.risks import RiskContent

    refs = _requirement_refs(values.pop("requirements"))
    controls = list(values.pop("controls"))
    return RiskContent(**values, controls=controls, requirements=refs)


@click.group("risks")
def risks() -> None:
    """An organisation's risk register, reached through any of its assessments."""


@risks.command("list")
@click.argument("assessment_id", type=click.UUID)
@json_option
def list_command(assessment_id: uuid.UUID, as_json: bool) -> None:
    """The register of the assessment's organisation, highest risk first, with its method."""
    from orchestrator.contracts.risk_method import method_text
    from orchestrator.service.risks import risk_register

    register = risk_register(_for_assessment(assessment_id), assessment_id)
    if as_json:
        emit_json(register)
        return
    click.echo(f"risk register of {register.organization_id}")
    click.echo(method_text())
    if not register.risks:
        click.echo("no risks")
        return
    rows = [
        [
            v.risk_id,
            v.version,
            short(v.title, 40),
            f"{v.score} {v.level}",
            v.owner,
            v.treatment,
            v.accepted_by or "-",
        ]
        for v in register.risks
    ]
    headers = ["risk", "v", "title", "score", "owner", "treatment", "accepted by"]
    click.echo(table(headers, rows))


@risks.command("show")
@click.argument("risk_id", type=click.UUID)
@json_option
def show_command(risk_id: uuid.UUID, as_json: bool) -> None:
    """One risk at its newest version."""
    from orchestrator.service.risks import get_risk

    _print(get_risk(_for_risk(risk_id), risk_id), as_json)


@risks.command("history")
@click.argument("risk_id", type=click.UUID)
@json_option
def history_command(risk_id: uuid.UUID, as_json: bool) -> None:
    """Every version of a risk, oldest first: who changed what, when."""
    from orchestrator.service.risks import risk_history

    views = risk_history(_for_risk(risk_id), risk_id)
    if as_json:
        emit_json(views)
        return
    rows = [
        [v.version, v.change, when(v.created_at), v.actor_id, f"{v.score} {v.level}", v.owner]
        for v in views
    ]
    click.echo(table(["v", "change", "at", "by", "score", "owner"], rows))


@risks.command("add")
@click.argument("assessment_id", type=click.UUID)
@_content_options
@actor_option
@json_option
def add_command(assessment_id: uuid.UUID, actor: str | None, as_json: bool, **values: Any) -> None:
    """Record a risk in the register of the assessment's organisation."""
    from orchestrator.service.risks import create_risk

    content = _content(values)
    _print(create_risk(_for_assessment(assessment_id, actor), assessment_id, content), as_json)


@risks.command("revise")
@click.argument("risk_id", type=click.UUID)
@click.option("--assessment", "assessment_id", required=True, type=click.UUID)
@click.option("--expect-version", type=click.IntRange(1), help="Refused if the risk moved on.")
@_content_options
@actor_option
@json_option
def revise_command(
    risk_id: uuid.UUID,
    assessment_id: uuid.UUID,
    expect_version: int | None,
    actor: str | None,
    as_json: bool,
    **values: Any,
) -> None:
    """The risk's next version with this content (a standing acceptance is cleared)."""
    from orchestrator.service.risks import update_risk

    who = _for_risk(risk_id, actor)
    content = _content(values)
    view = update_risk(who, risk_id, assessment_id, content, expected_version=expect_version)
    _print(view, as_json)


@risks.command("accept")
@click.argument("risk_id", type=click.UUID)
@click.option("--assessment", "assessment_id", required=True, type=click.UUID)
@click.option("--note", required=True, help="Why the residual risk is acceptable.")
@click.option("--expect-version", type=click.IntRange(1), help="Refused if the risk moved on.")
@actor_option
@json_option
def accept_command(
    risk_id: uuid.UUID,
    assessment_id: uuid.UUID,
    note: str,
    expect_version: int | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """Accept the risk's residual risk (refused to the risk's owner)."""
    from orchestrator.service.risks import accept_risk

    who = _for_risk(risk_id, actor)
    view = accept_risk(who, risk_id, assessment_id, note=note, expected_version=expect_version)
    _print(view, as_json)


@risks.command("export")
@click.argument("assessment_id", type=click.UUID)
@click.option("--format", "fmt", type=click.Choice(["csv", "xlsx"]), default="csv")
@click.option("--output", "-o", required=True, type=click.Path(dir_okay=False, path_type=Path))
def export_command(assessment_id: uuid.UUID, fmt: str, output: Path) -> None:
    """Write the register as CSV or XLSX, its method stated above the rows."""
    from orchestrator.contracts.clock import utcnow
    from orchestrator.service.risk_exports import render_register_csv, render_register_xlsx
    from orchestrator.service.risks import risk_register

    register = risk_register(_for_assessment(assessment_id), assessment_id)
    if fmt == "xlsx":
        data = render_register_xlsx(register, utcnow().strftime("%Y-%m-%dT%H:%M:%SZ"))
    else:
        data = render_register_csv(register)
    output.write_bytes(data)
    click.echo(f"wrote {len(register.risks)} risk(s) to {output}")


def _for_proposal(proposal_id: uuid.UUID, actor: str | None = None) -> Actor:
    from orchestrator.service.operator_lookups import tenant_of_risk_proposal

    return operator_in(tenant_of_risk_proposal(proposal_id), actor)


def _print_proposal(view: Any, as_json: bool) -> None:
    if as_json:
        emit_json(view)
        return
    proposed, reason = view.proposed, view.reason
    click.echo(f"proposal {view.proposal_id} ({view.status}): {proposed.get('title')}")
    click.echo(f"  finding    {view.finding} (gap analysis v{view.gap_version})")
    click.echo(f"  missing    {reason.get('missing')}")
    click.echo(
        f"  rating     likelihood {proposed.get('likelihood')} x impact "
        f"{proposed.get('impact')}: {proposed.get('rating_basis')}"
    )
    click.echo(f"  controls   {', '.join(proposed.get('controls') or []) or '-'}")
    if view.decided_by:
        risk = f" risk {view.risk_id}" if view.risk_id else ""
        click.echo(
            f"  decided    {view.status} by {view.decided_by} at {when(view.decided_at)}{risk}"
        )
    if view.decision_note:
        click.echo(f"  note       {view.decision_note}")


@risks.group("proposals")
def proposals() -> None:
    """Risks the gap findings proposed: list them, accept, merge or reject each once."""


@proposals.command("list")
@click.argument("assessment_id", type=click.UUID)
@click.option("--status", type=click.Choice(["proposed", "accepted", "merged", "rejected"]))
@json_option
def proposals_list(assessment_id: uuid.UUID, status: str | None, as_json: bool) -> None:
    """The assessment's risk proposals, undecided first."""
    from orchestrator.contracts.risk_method import ProposalStatus
    from orchestrator.service.risk_proposals import risk_proposals

    wanted = ProposalStatus(status) if status else None
    found = risk_proposals(_for_assessment(assessment_id), assessment_id, wanted)
    if as_json:
        emit_json(found)
        return
    rows = [
        [
            short(str(p.proposal_id)),
            p.status,
            p.finding,
            f"{p.proposed.get('likelihood')}x{p.proposed.get('impact')}",
            short(str(p.risk_id)) if p.risk_id else "-",
        ]
        for p in found
    ]
    click.echo(table(["proposal", "status", "finding", "LxI", "risk"], rows))


@proposals.command("show")
@click.argument("proposal_id", type=click.UUID)
@json_option
def proposals_show(proposal_id: uuid.UUID, as_json: bool) -> None:
    """A proposal with its reason and its decision."""
    from orchestrator.service.risk_proposals import get_proposal

    _print_proposal(get_proposal(_for_proposal(proposal_id), proposal_id), as_json)


@proposals.command("accept")
@click.argument("proposal_id", type=click.UUID)
@click.option("--owner", required=True, help="The person who owns the risk.")
@click.option("--control", "controls", multiple=True, help="An SCF control id kept.")
@click.option(
    "--requirement",
    "requirements",
    multiple=True,
    metavar="FRAMEWORK=ID",
    help="A requirement kept (default: as proposed).",
)
@click.option("--likelihood", type=click.IntRange(1, 5))
@click.option("--impact", type=click.IntRange(1, 5))
@click.option("--note")
@actor_option
@json_option
def proposals_accept(
    proposal_id: uuid.UUID,
    owner: str,
    controls: tuple[str, ...],
    requirements: tuple[str, ...],
    likelihood: int | None,
    impact: int | None,
    note: str | None,
    actor: str | None,
    as_json: bool,
) -> None:
    """A new risk in the register from the proposal (controls: as proposed unless given)."""
    from orchestrator.service.risk_proposals import Selection, accept_proposal

    selection = Selection(
        owner=owner,
        likelihood=likelihood,
        impact=impact,
        controls=list(controls) if controls else None,
        requirements=_requirement_refs(requirements) if requirements else None,
    )
    who = _for_proposal(proposal_id, actor)
    _print_proposal(accept_proposal(who, proposal_id, selection, note), as_json)


@proposals.command("merge")
@click.argument("proposal_id", type=click.UUID)
@click.option("--risk", "risk_id", required=True, type=click.UUID, help="The risk held.")
@click.option("--note")
@actor_option
@json_option
def proposals_merge(
    proposal_id: uuid.UUID, risk_id: uuid.UUID, note: str | None, actor: str | None, as_json: bool
) -> None:
    """Link the proposal's finding to a risk the register holds."""
    from orchestrator.service.risk_proposals import merge_proposal

    who = _for_proposal(proposal_id, actor)
    _print_proposal(merge_proposal(who, proposal_id, risk_id, note), as_json)


@proposals.command("reject")
@click.argument("proposal_id", type=click.UUID)
@click.option("--reason", required=True, help="Why the finding raises no risk to register.")
@actor_option
@json_option
def proposals_reject(proposal_id: uuid.UUID, reason: str, actor: str | None, as_json: bool) -> None:
    """Reject the proposal with the reason; nothing enters the register."""
    from orchestrator.service.risk_proposals import reject_proposal

    who = _for_proposal(proposal_id, actor)
    _print_proposal(reject_proposal(who, proposal_id, reason), as_json)
