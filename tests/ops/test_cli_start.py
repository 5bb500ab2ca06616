"""`lifecycle` starts light: its help and its version load none of the fleet's heavy
libraries (their imports are what made every command take seconds to start; the time
itself is printed by `python -m bench.cli_start`, never asserted)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from orchestrator.cli.group import DISTRIBUTION

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("celery", "sqlalchemy", "numpy", "fastapi", "pydantic", "rich", "humanize")

#: Asks `--help` of the group and of every command and subcommand, in one process, then
#: prints the command lines asked and the heavy libraries loaded.
WALK_THE_HELP = """
import json, sys
import click
from orchestrator.cli.main import main
from orchestrator.cli.group import lifecycle

asked = []

def ask(path):
    asked.append(" ".join(path))
    assert main([*path, "--help"]) == 0, path

def walk(group, path):
    ctx = click.Context(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        ask([*path, name])
        if isinstance(command, click.Group):
            walk(command, [*path, name])

ask([])
walk(lifecycle, [])
loaded = sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:]))
print(json.dumps({"asked": asked, "loaded": loaded}), file=sys.stderr)
"""


def run_python(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_help_of_every_command_loads_no_heavy_library() -> None:
    done = run_python("-c", WALK_THE_HELP, *HEAVY)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert {"", "demo", "list", "dead-letters list", "catalog import"} <= set(report["asked"])
    assert report["loaded"] == []
    assert "Usage: lifecycle" in done.stdout


def test_version_prints_the_installed_package_version() -> None:
    done = run_python(
        "-c",
        "import sys\n"
        "from orchestrator.cli.main import main\n"
        "code = main(['--version'])\n"
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))\n"
        "sys.exit(code)",
    )
    assert done.returncode == 0, done.stderr
    first, loaded = done.stdout.splitlines()
    assert first == f"lifecycle, version {version(DISTRIBUTION)}"
    assert loaded == "[]"


def test_python_dash_m_orchestrator_answers_version() -> None:
    done = run_python("-m", "orchestrator", "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"lifecycle, version {version(DISTRIBUTION)}"


def test_the_shell_completes_commands_as_docs_operating_says() -> None:
    # The line docs/operating.md gives loads a completion function; bash then asks the
    # CLI, which answers with the commands that start as typed.
    script = subprocess.run(
        [sys.executable, "-m", "orchestrator"],
        env={**os.environ, "_LIFECYCLE_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert "complete -o nosort -F _lifecycle_completion" in script.stdout, script.stderr
    asked = subprocess.run(
        [sys.executable, "-m", "orchestrator"],
        env={
            **os.environ,
            "_LIFECYCLE_COMPLETE": "bash_complete",
            "COMP_WORDS": "lifecycle ri",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert asked.stdout.split() == ["plain,risks"], asked.stderr
    assert (
        'eval "$(_LIFECYCLE_COMPLETE=bash_source lifecycle)"'
        in (ROOT / "docs" / "operating.md").read_text()
    )
