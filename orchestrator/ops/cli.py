"""`celery -A orchestrator lifecycle ...`: see runs and repair them from the celery CLI.

Registered through the `celery.commands` entry point. Each command calls the same
functions as the HTTP API (operations, queries, apikeys) and prints text for people or,
with `--json`, one JSON document for scripts. Bad arguments and refused commands print
a clear message on stderr and exit non-zero (2: usage, 1: refused or failed).
"""

from __future__ import annotations

import click

from orchestrator.ops.clickkit import LifecycleGroup

_RUNS, _CONTROL, _ADMIN = ("orchestrator.ops.cmd_runs", "orchestrator.ops.cmd_control",
                           "orchestrator.ops.cmd_admin")
_CATALOG = "orchestrator.ops.cmd_catalog"
COMMANDS = {
    "list": f"{_RUNS}:list_command",
    "show": f"{_RUNS}:show_command",
    "retry": f"{_CONTROL}:retry_command",
    "reprocess": f"{_CONTROL}:reprocess_command",
    "new-version": f"{_CONTROL}:new_version_command",
    "cancel": f"{_CONTROL}:cancel_command",
    "block": f"{_CONTROL}:block_command",
    "resume": f"{_CONTROL}:resume_command",
    "sweep": f"{_ADMIN}:sweep_command",
    "dead-letters": f"{_ADMIN}:dead_letters",
    "apikey": f"{_ADMIN}:apikey",
    "catalog": f"{_CATALOG}:catalog",
    "framework": f"{_CATALOG}:framework",
}


@click.group(cls=LifecycleGroup, name="lifecycle", lazy=COMMANDS)
def lifecycle() -> None:
    """Operate assessment lifecycle runs: list, show, retry, reprocess, cancel, resume,
    sweeps, dead letters, API keys, control catalogues and frameworks."""
