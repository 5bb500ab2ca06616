"""A requirement and its sub-items as one: ISO/IEC 27001's clause 6.1.2 is assessed once,
with 6.1.2(a), 6.1.2(a)(1) ... named inside it. An assessor signs one finding per
requirement; a finding per lettered sub-item repeats the same condition many times."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from orchestrator.catalog.scf_frameworks import requirement_of

Row = dict[str, Any]


def label_of(framework: Any, requirement_id: Any) -> str:
    """How drafts name a requirement: "ISO/IEC 27001:2022 6.1.2"."""
    return f"{framework} {requirement_of(str(requirement_id))}"


@dataclass
class Requirement:
    framework: str
    requirement_id: str
    rows: list[Row] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.framework} {self.requirement_id}"

    @property
    def in_scope(self) -> list[Row]:
        return [r for r in self.rows if r.get("applicable") is not False]

    @property
    def lead(self) -> Row:
        """The requirement's own row where it has one, else its first sub-item's."""
        own = [r for r in self.rows if str(r.get("requirement_id")) == self.requirement_id]
        return (own or self.rows)[0]

    def sub_items(self, rows: Iterable[Row]) -> list[str]:
        return [
            str(r.get("requirement_id"))
            for r in rows
            if str(r.get("requirement_id")) != self.requirement_id
        ]


def rolled_up(rows: Iterable[Row]) -> list[Requirement]:
    """Evidence rows grouped by requirement, in their first row's order."""
    found: dict[tuple[str, str], Requirement] = {}
    for row in rows:
        framework = str(row.get("framework"))
        key = (framework, requirement_of(str(row.get("requirement_id"))))
        found.setdefault(key, Requirement(*key)).rows.append(row)
    return list(found.values())
