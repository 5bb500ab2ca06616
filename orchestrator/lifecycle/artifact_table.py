"""The table of draft artifact kinds in docs/lifecycle.md, written from their declarations
(orchestrator.contracts.artifact_registry), so the page cannot drift.

`python -m orchestrator.lifecycle.artifact_table` prints it; `--write` puts it between the
markers in docs/lifecycle.md (a test checks the page equals what this writes).
"""

from __future__ import annotations

import sys

from orchestrator.contracts.artifact_registry import ArtifactDeclaration, declared
from orchestrator.contracts.doc_sections import DOCS, DocSection


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
    return "\n".join([head, "|---|---|---|---|---|---|", *map(_row, declared())])


SECTION = DocSection(DOCS / "lifecycle.md", "artifacts", render)
PAGE, written = SECTION.page, SECTION.written

if __name__ == "__main__":
    raise SystemExit(SECTION.main(sys.argv[1:]))
