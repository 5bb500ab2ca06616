"""`lifecycle history`: a run's decision history as a file, and replaying files through
today's rules (orchestrator.engine.history)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import click

from orchestrator.cli.clickkit import RUN_ID

# The engine is imported inside each command: `--help` must not load it.

_FILES = click.argument(
    "files", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path)
)


def _write(path: Path, history: dict[str, object]) -> None:
    path.write_text(json.dumps(history, indent=1, sort_keys=True) + "\n")


@click.group("history")
def history() -> None:
    """Export a run's decision history; check or regenerate recorded histories."""


@history.command("export")
@click.argument("run_id", type=RUN_ID)
@click.option(
    "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write here, not stdout."
)
def export_command(run_id: uuid.UUID, output: Path | None) -> None:
    """Every signal RUN_ID decided, in order, with what each decision made of it. The
    history is checked against the database first (each fate, the stored state)."""
    from orchestrator.service.operator_lookups import run_history

    recorded = run_history(run_id)
    if output is None:
        click.echo(json.dumps(recorded, indent=1, sort_keys=True))
        return
    _write(output, recorded)
    click.echo(f"{output}: {len(recorded['decisions'])} decisions")


@history.command("check")
@_FILES
def check_command(files: tuple[Path, ...]) -> None:
    """Replay each history through today's rules; exit 1 at the first that diverges."""
    from orchestrator.engine.history import first_divergence

    diverged = []
    for path in files:
        recorded = json.loads(path.read_text())
        divergence = first_divergence(recorded)
        decided = len(recorded["decisions"])
        click.echo(f"{path}: {divergence or f'ok ({decided} decisions)'}")
        if divergence:
            diverged.append(path)
    if diverged:
        raise click.ClickException(f"{len(diverged)} of {len(files)} histories diverge")


@history.command("regenerate")
@_FILES
def regenerate_command(files: tuple[Path, ...]) -> None:
    """Rewrite each history's expectations with today's rules (after a rule change made
    on purpose; review the diff before committing it)."""
    from orchestrator.engine.history import regenerate

    for path in files:
        recorded = json.loads(path.read_text())
        fresh = regenerate(recorded)
        changed = fresh != recorded
        if changed:
            _write(path, fresh)
        click.echo(f"{path}: {'regenerated' if changed else 'unchanged'}")
