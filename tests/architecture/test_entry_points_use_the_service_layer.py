"""The console and the CLI read and write through the service layer: no module of theirs
builds a query or opens a transaction. What they may use of the storage below: telling a
busy database from other errors (`orchestrator.db.busy`, `sqlalchemy.exc`) and migrating
(`orchestrator.db.migrate`, the commands that do so on purpose)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALLOWED = ("orchestrator.db.busy", "orchestrator.db.migrate", "sqlalchemy.exc")


def imports(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
    return found


@pytest.mark.parametrize("package", ["console", "cli"])
def test_no_sql_in_the_console_or_the_cli(package: str) -> None:
    wrong = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "orchestrator" / package).rglob("*.py"))
        for name in imports(path)
        if name.startswith(("sqlalchemy", "orchestrator.db")) and not name.startswith(ALLOWED)
    ]
    assert not wrong, "\n".join(wrong)
