"""`celery -A orchestrator lifecycle ...`: see runs and repair them from the celery CLI.

Registered through the `celery.commands` entry point. Each command calls the same
functions as the HTTP API (operations, queries, apikeys) and prints text for people or,
with `--json`, one JSON document for scripts. Bad arguments and refused commands print
a clear message on stderr and exit non-zero (2: usage, 1: refused or failed).
"""

from __future__ import annotations

import click

from orchestrator.ops import cmd_admin, cmd_control, cmd_runs
from orchestrator.ops.clickkit import LifecycleGroup


@click.group(cls=LifecycleGroup, name="lifecycle")
def lifecycle() -> None:
    """Operate assessment lifecycle runs: list, show, retry, reprocess, cancel, resume,
    sweeps, dead letters and API keys."""


for _module in (cmd_runs, cmd_control, cmd_admin):
    for _command in _module.COMMANDS:
        lifecycle.add_command(_command)
