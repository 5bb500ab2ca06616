"""The table of draft artifact kinds in docs/lifecycle.md, written from their declarations
(orchestrator.contracts.artifact_registry), so the page cannot drift.

`python -m orchestrator.lifecycle.artifact_table` prints it; `--write` puts it between the
markers in docs/lifecycle.md (a test checks the page equals what this writes).
"""

from __future__ import annotations

import sys
from pathlib import Path

from orchestrator.contracts.artifact_registry import ArtifactDeclaration, declared

PAGE = Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md"
BEGIN, END = "<!-- artifacts:begin -->", "<!-- artifacts:end -->"


def _code(value: str | None) -> str:
    return f"`{value}`" if value else "—"


def _row(d: ArtifactDeclaration) -> str:
    rows = f"`{d.rows.list_name}` by `{d.rows.key}`" if d.rows else "—"
    decided = "—"
    if d.decided is not None:
        required = "required by default" if d.decided.by_default else "listed, not required"
        decided = f"{', '.join(f'`{f}`' for f in d.decided.fields)} set ({required})"
    cells = (_code(d.kind), _code(d.drafted_at), _code(d.approved_by), _code(d.approved_at))
    return f"| {' | '.join((*cells, rows, decided))} |"


def render() -> str:
    head = (
        "| artifact kind | drafted at | approved by | waits at | rows people amend | decided when |"
    )
    return "\n".join(
        [BEGIN, "", head, "|---|---|---|---|---|---|", *map(_row, declared()), "", END]
    )


def written(page: str) -> str:
    before, _, rest = page.partition(BEGIN)
    _, _, after = rest.partition(END)
    return before + render() + after


def main(argv: list[str]) -> int:
    if "--write" in argv:
        PAGE.write_text(written(PAGE.read_text()))
    else:
        print(render())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
