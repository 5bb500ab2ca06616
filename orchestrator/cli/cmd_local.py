"""Commands for one machine: the demo on the embedded default, migrations, serving the API."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from contextlib import closing, nullcontext
from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:
    from orchestrator.demo.progress import ProgressBars


@click.command("demo")
@click.option(
    "--framework",
    default="SOC 2",
    show_default=True,
    help="The framework the scripted reviewer selects.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Threads of the in-process worker.",
)
@click.option(
    "--timeout",
    "stall_s",
    type=click.FloatRange(1),
    default=300.0,
    show_default=True,
    help="Seconds the run may go without progress (a step finished or a batch of work "
    "done) before the demo gives up; a slow run that progresses is never cut off.",
)
def demo_command(framework: str, concurrency: int, stall_s: float) -> None:
    """Run one whole assessment on the embedded default (SQLite, in-process worker)."""
    from orchestrator.cli.output import span, table
    from orchestrator.config.settings import get_settings
    from orchestrator.db.migrate import upgrade
    from orchestrator.demo.reviewer import RunStalled
    from orchestrator.demo.run import run_demo
    from orchestrator.engine.messages import get_app
    from orchestrator.runtime.embedded import embedded_worker

    settings = get_settings()
    if not settings.is_embedded_broker:
        raise click.UsageError("demo runs on the embedded default; unset LIFECYCLE_BROKER_URL")
    click.echo(f"database: {settings.resolved_database_url}")
    upgrade()
    say, bars = _demo_output()
    drawn = closing(bars) if bars is not None else nullcontext()
    try:
        # The bars are left as drawn before anything else is printed.
        with embedded_worker(get_app(), concurrency=concurrency), drawn:
            result = run_demo(say=say, framework=framework, stall_s=stall_s, on_progress=bars)
    except RunStalled as stalled:
        click.echo(f"\n{stalled}.", err=True)
        click.echo(
            "The run is kept in the database. To let it go on, start the API with its "
            f"in-process worker (`lifecycle api`) and follow it with `lifecycle show "
            f"{stalled.run_id}`; `lifecycle demo --timeout 900` waits longer.",
            err=True,
        )
        raise SystemExit(1) from None
    click.echo()
    click.echo(f"run {result.run.id}: {result.run.status} in {span(result.seconds)}")
    steps = table(["step", "took"], [(step, span(seconds)) for step, seconds in result.steps])
    click.echo("\n".join(f"  {line}" for line in steps.splitlines()))
    click.echo(f"report: {result.report_path}")
    if result.run.status != "completed":
        raise SystemExit(1)


def _demo_output() -> tuple[Callable[[str], None], ProgressBars | None]:
    """On a terminal, the demo's lines and its progress bars share one rich console (the
    lines print above the bars); otherwise plain lines, a batch change a line."""
    from orchestrator.cli.output import is_terminal

    if not is_terminal(sys.stdout):
        return click.echo, None
    from rich.console import Console

    from orchestrator.demo.progress import ProgressBars

    console = Console(force_terminal=True, highlight=False)

    def say(line: str) -> None:
        console.out(line, highlight=False)

    return say, ProgressBars(console, time.monotonic)


@click.command("migrate")
def migrate_command() -> None:
    """Bring the database to the latest schema."""
    from orchestrator.db.migrate import upgrade

    upgrade()
    click.echo("database is at the latest schema")


@click.command("api")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True)
@click.option("--workers", type=click.IntRange(1), default=1, show_default=True)
def api_command(host: str, port: int, workers: int) -> None:
    """Serve the HTTP API with uvicorn."""
    import uvicorn

    uvicorn.run("orchestrator.api:app", host=host, port=port, workers=workers, proxy_headers=True)
