"""The configuration reference (docs/configuration.md), written from the settings classes
themselves: every variable, its default and what it means, so the page cannot drift.

`python -m orchestrator.config.reference` prints it; `--write` puts it between the
markers in docs/configuration.md (a test checks the page equals what this writes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from orchestrator.config.settings import Settings
from orchestrator.config.sweep_registry import declared
from orchestrator.contracts.doc_sections import DOCS, DocSection


def _default(field: FieldInfo) -> str:
    if field.default_factory is not None:
        made = field.default_factory()  # type: ignore[call-arg]
        return "—" if made in ({}, [], None) else f"`{_plain(made)}`"
    if field.default is PydanticUndefined or field.default is None:
        return "—"
    return f"`{_plain(field.default)}`"


def _plain(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if isinstance(value, Path):
        return str(value)
    if value == "":
        return '""'
    return str(value).replace("|", "\\|")


def _rows(model: type[BaseSettings]) -> list[str]:
    prefix = str(model.model_config.get("env_prefix", ""))
    rows: list[str] = []
    for name, field in model.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseSettings):
            continue  # a group of its own, below
        meaning = (field.description or "").replace("|", "\\|").replace("\n", " ")
        rows.append(f"| `{(prefix + name).upper()}` | {_default(field)} | {meaning} |")
    return rows


def groups() -> list[tuple[str, type[BaseSettings]]]:
    found: list[tuple[str, type[BaseSettings]]] = [("general", Settings)]
    for name, field in Settings.model_fields.items():
        kind = field.annotation
        if isinstance(kind, type) and issubclass(kind, BaseSettings):
            found.append((name, kind))
    return found


def render() -> str:
    out: list[str] = []
    for name, model in groups():
        doc = (model.__doc__ or "").strip().splitlines()
        out += [f"### {name}", ""]
        if doc and not doc[0].startswith("Usage docs"):
            out += [doc[0], ""]
        out += ["| variable | default | meaning |", "|---|---|---|", *_rows(model), ""]
    out += ["### sweeps by name", "", "| sweep | every (s) | what it does |", "|---|---|---|"]
    out += [f"| `{s.name}` | {s.interval_s:g} | {s.does} |" for s in declared()]
    return "\n".join(out)


SECTION = DocSection(DOCS / "configuration.md", "settings", render)
PAGE, written = SECTION.page, SECTION.written

if __name__ == "__main__":
    raise SystemExit(SECTION.main(sys.argv[1:]))
