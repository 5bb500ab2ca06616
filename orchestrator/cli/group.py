"""The one `lifecycle` click app: `lifecycle ...` and `celery -A orchestrator lifecycle ...`.

Registered as the `lifecycle` console script and through the `celery.commands` entry
point. Each command calls the same
functions as the HTTP API (operations, queries, apikeys) and prints text for people or,
with `--json`, one JSON document for scripts. Bad arguments and refused commands print
a clear message on stderr and exit non-zero (2: usage, 1: refused or failed).
"""

from __future__ import annotations

import click

from orchestrator.cli.clickkit import LifecycleGroup

_RUNS, _CONTROL, _ADMIN = (
    "orchestrator.cli.cmd_runs",
    "orchestrator.cli.cmd_control",
    "orchestrator.cli.cmd_admin",
)
_LOCAL = "orchestrator.cli.cmd_local"
_CATALOG = "orchestrator.cli.cmd_catalog"
COMMANDS = {
    "demo": f"{_LOCAL}:demo_command",
    "migrate": f"{_LOCAL}:migrate_command",
    "api": f"{_LOCAL}:api_command",
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
    "role": f"{_ADMIN}:role",
    "oidc-group": f"{_ADMIN}:oidc_group",
    "catalog": f"{_CATALOG}:catalog",
    "quality": "orchestrator.cli.cmd_quality:quality_command",
    "framework": f"{_CATALOG}:framework",
    "history": "orchestrator.cli.cmd_history:history",
    "migrate-definition": f"{_CONTROL}:migrate_command",
    "definitions": "orchestrator.cli.cmd_definitions:definitions_command",
    "handoff": "orchestrator.cli.cmd_handoffs:handoff",
    "effects": "orchestrator.cli.cmd_handoffs:effects_command",
    "adopt": "orchestrator.cli.cmd_handoffs:adopt_command",
    "export-target": "orchestrator.cli.cmd_exports:export_target",
    "health": "orchestrator.cli.cmd_health:health_command",
    "verify": "orchestrator.cli.cmd_verify:verify_command",
    "report": "orchestrator.cli.cmd_report:report_command",
    "risks": "orchestrator.cli.cmd_risks:risks",
}


#: The installed distribution whose version `--version` prints (importlib.metadata).
DISTRIBUTION = "assessment-lifecycle-fleet"


@click.group(cls=LifecycleGroup, name="lifecycle", lazy=COMMANDS)
@click.version_option(package_name=DISTRIBUTION, prog_name="lifecycle")
def lifecycle() -> None:
    """Run and operate assessment lifecycles: the demo, migrations, the HTTP API; list,
    show, retry, reprocess, cancel, resume; sweeps, dead letters, API keys, approver
    roles, control catalogues and frameworks; handoffs, effects, definitions, histories;
    reports and their exports; the risk register."""
