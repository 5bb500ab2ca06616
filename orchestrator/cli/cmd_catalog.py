"""Control catalogues: `catalog import|list|diff|adopt` and `framework list|show`."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from orchestrator.cli.clickkit import json_option
from orchestrator.cli.output import emit_json, short, span, table, working

F = TypeVar("F", bound=Callable[..., Any])


def _refusals(function: F) -> F:
    """A bad file, an unknown version or framework: a message and exit status 1. On the
    embedded default the schema is brought up first, here rather than in the groups so
    that `--help` touches no database."""

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        _schema_on_the_embedded_default()
        try:
            return function(*args, **kwargs)
        except (ValueError, LookupError) as error:
            raise click.ClickException(str(error)) from error

    return wrapper  # type: ignore[return-value]


def _schema_on_the_embedded_default() -> None:
    # On the embedded default nothing else migrates the database first (as `demo` does).
    from orchestrator.config.settings import get_settings

    if get_settings().is_embedded_broker:
        from orchestrator.db.migrate import upgrade

        upgrade()


@click.group("catalog")
def catalog() -> None:
    """Control catalogue versions: the shipped SCF workbook and imported ones."""


@catalog.command("import")
@click.argument("path", type=click.Path(path_type=Path, dir_okay=False))
@json_option
@_refusals
def catalog_import(path: Path, as_json: bool) -> None:
    """Import an SCF workbook (.xlsx) or an OSCAL catalog or profile (.json). The same
    file again changes nothing; a newer release becomes a new version."""
    from orchestrator.catalog.service import import_file
    from orchestrator.contracts.plain import jsonable

    began = time.perf_counter()
    # One call reads and stores the whole file: a spinner and the time so far on a
    # terminal, nothing for a script (`--json`, a pipe).
    with working(f"importing {path.name}", show=not as_json):
        result = import_file(path)
    seconds = time.perf_counter() - began
    if as_json:
        emit_json({**jsonable(result), "info": result.info.as_dict(), "seconds": seconds})
        return
    verb = "imported" if result.created else "already imported, nothing changed:"
    click.echo(f"{verb} {result.info.name} {result.info.version} ({result.info.id})")
    click.echo(
        f"  {result.controls} controls, {result.frameworks} frameworks, "
        f"{result.requirements} requirements, {result.links} links "
        f"in {span(seconds)}"
    )
    click.echo(f"  licence: {result.info.licence}; attribution: {result.info.attribution}")


@catalog.command("list")
@json_option
@_refusals
def catalog_list(as_json: bool) -> None:
    """Every catalogue version; `current` ones are what a run starting now pins."""
    from orchestrator.catalog.service import list_catalogs

    items = list_catalogs()
    if as_json:
        emit_json({"items": [i.as_dict() for i in items]})
        return
    click.echo(
        table(
            ("NAME", "VERSION", "CONTROLS", "FRAMEWORKS", "CURRENT", "SOURCE", "ID"),
            [
                (
                    i.info.name,
                    i.info.version,
                    i.controls,
                    i.frameworks,
                    "yes" if i.current else "",
                    ("shipped " if i.shipped else "") + i.info.source_name,
                    i.info.id,
                )
                for i in items
            ],
        )
    )


@catalog.command("diff")
@click.argument("old")
@click.argument("new")
@json_option
@_refusals
def catalog_diff(old: str, new: str, as_json: bool) -> None:
    """Controls added, removed and changed between two versions (ids, "NAME VERSION" or a
    version)."""
    from orchestrator.catalog.service import diff_catalogs

    diff = diff_catalogs(old, new)
    if as_json:
        emit_json(diff)
        return
    click.echo(
        f"{diff['old']['name']} {diff['old']['version']} -> "
        f"{diff['new']['name']} {diff['new']['version']}"
    )
    click.echo(f"added ({len(diff['added'])}): {', '.join(diff['added'])}")
    click.echo(f"removed ({len(diff['removed'])}): {', '.join(diff['removed'])}")
    click.echo(f"changed ({len(diff['changed'])}):")
    for change in diff["changed"]:
        click.echo(f"  {change['control_id']}: {', '.join(change['fields'])}")


@catalog.command("adopt")
@click.argument("assessment_id", type=click.UUID)
@click.argument("target")
@click.option("--reason", help="Why the assessment adopts the version (required to adopt).")
@click.option("--key", help="Idempotency key (default: one for this assessment and target).")
@click.option("--actor", help="Who adopts (default: operator:<login>).")
@click.option("--dry-run", is_flag=True, help="Only print the diff and the rows re-opened.")
@json_option
@_refusals
def catalog_adopt(
    assessment_id: Any,
    target: str,
    reason: str | None,
    key: str | None,
    actor: str | None,
    dry_run: bool,
    as_json: bool,
) -> None:
    """Move an assessment to catalogue version TARGET: the diff from the version it uses,
    then a reassessment re-opening exactly the SoA rows it affects."""
    from orchestrator.cli.operators import operator_in
    from orchestrator.contracts.errors import FleetError, NotFound
    from orchestrator.contracts.plain import jsonable
    from orchestrator.service.catalogue_adoption import adopt_catalogue, catalogue_diff
    from orchestrator.service.operator_lookups import tenant_of_assessment

    try:
        who = operator_in(tenant_of_assessment(assessment_id), actor)
    except NotFound as error:
        raise click.ClickException(error.message) from error
    try:
        if dry_run:
            diff = catalogue_diff(who, assessment_id, target)
            if as_json:
                emit_json(diff)
                return
            click.echo(f"{diff['from']['version']} -> {diff['to']['version']}")
            for field in ("added", "removed"):
                click.echo(f"{field} ({len(diff[field])}): {', '.join(diff[field])}")
            reworded = [r["control_id"] for r in diff["reworded"]]
            click.echo(f"reworded ({len(reworded)}): {', '.join(reworded)}")
            remapped = [f"{r['framework']} {r['requirement_id']}" for r in diff["remapped"]]
            click.echo(f"remapped ({len(remapped)}): {', '.join(remapped)}")
            click.echo(f"rows re-opened ({len(diff['affected_rows'])}):")
            for row in diff["affected_rows"]:
                click.echo(f"  {row}")
            return
        if not reason:
            raise click.UsageError("--reason is required to adopt (or --dry-run)")
        view = adopt_catalogue(
            who,
            assessment_id,
            target,
            reason=reason,
            idempotency_key=key or f"cli:adopt:{assessment_id}:{target}",
        )
    except FleetError as error:
        raise click.ClickException(str(error)) from error
    if as_json:
        emit_json(jsonable(view.model_dump(mode="json")))
        return
    click.echo(f"{view.status}: {len(view.reopened_rows)} rows re-opened")
    if view.reassessment_id is not None:
        click.echo(f"reassessment {view.reassessment_id}")


@click.group("framework")
def framework() -> None:
    """Frameworks the catalogues crosswalk to, with their requirements."""


@framework.command("list")
@click.option(
    "--catalog",
    "catalog_spec",
    default=None,
    metavar="VERSION",
    help="Frameworks of this catalogue version (default: the current ones).",
)
@json_option
@_refusals
def framework_list(catalog_spec: str | None, as_json: bool) -> None:
    """Frameworks with their requirement and linked SCF control counts."""
    from orchestrator.catalog.service import list_frameworks

    items = list_frameworks(catalog_spec)
    if as_json:
        emit_json({"items": items})
        return
    click.echo(
        table(
            ("NAME", "VERSION", "REQUIREMENTS", "SCF CONTROLS", "CATALOGUE", "ID"),
            [
                (
                    f["name"],
                    f["version"],
                    f["requirements"],
                    f["linked_controls"],
                    f"{f['catalog']['name']} {f['catalog']['version']}",
                    f["id"],
                )
                for f in items
            ],
        )
    )


@framework.command("show")
@click.argument("name")
@json_option
@_refusals
def framework_show(name: str, as_json: bool) -> None:
    """One framework (by name or id): each requirement with its linked SCF controls."""
    from orchestrator.catalog.service import show_framework

    shown = show_framework(name)
    if as_json:
        emit_json(shown)
        return
    click.echo(
        f"{shown['name']} ({shown['version'] or 'no version'}) from "
        f"{shown['catalog']['name']} {shown['catalog']['version']}: "
        f"{shown['requirements']} requirements, {shown['linked_controls']} "
        "linked SCF controls"
    )
    click.echo(
        table(
            ("REQUIREMENT", "SCF CONTROLS", "TITLE"),
            [
                (r["requirement_id"], ", ".join(r["controls"]) or "-", short(r["title"], 60))
                for r in shown["items"]
            ],
        )
    )
