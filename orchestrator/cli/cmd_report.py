"""`lifecycle report RUN`: the run's newest report, or one of its exports, as a file."""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import click

from orchestrator.cli.clickkit import RUN_ID
from orchestrator.cli.operators import operator_for


@click.command("report")
@click.argument("run_id", type=RUN_ID)
@click.option(
    "--format",
    "kind",
    default="html",
    show_default=True,
    help="html, or an export's kind (pdf, docx, json, poam_csv, poam_xlsx, oscal_poam, ...).",
)
@click.option(
    "--fedramp",
    is_flag=True,
    help="The OSCAL export is for FedRAMP: refused while it holds a placeholder SSP link "
    "or system id, naming the setting to set.",
)
@click.option(
    "--output",
    required=True,
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write the file here.",
)
def report_command(run_id: uuid.UUID, kind: str, fedramp: bool, output: Path) -> None:
    """Write RUN_ID's newest report (or its KIND export) to OUTPUT."""
    from orchestrator.contracts.errors import NotFound
    from orchestrator.service.fedramp_exports import check_fedramp_export
    from orchestrator.service.queries import latest_report

    found = latest_report(operator_for(run_id), run_id)
    if fedramp:
        check_fedramp_export(found.content, found.view.version, kind)
    if kind == "html":
        source = found.file
    else:
        exports = [e for e in found.content.get("exports", []) if isinstance(e, dict)]
        entry = next((e for e in exports if e.get("kind") == kind), None)
        source = Path(str(entry["path"])) if entry else None
    if source is None or not source.is_file():
        raise NotFound(f"report v{found.view.version} has no {kind} file")
    shutil.copyfile(source, output)
    click.echo(f"{output}: report v{found.view.version} {kind}")
