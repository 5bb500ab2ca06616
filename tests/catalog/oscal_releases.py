"""Versions of NIST's SP 800-53 OSCAL catalog cut down for adoption tests: the official
catalog's controls, verbatim, for a few of them, under another version number, with the
edits a new release makes (a control's statement reworded, a control removed)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _label(control: dict[str, Any]) -> str:
    labels = [p for p in control.get("props", []) if p["name"] == "label" and "class" not in p]
    return str(labels[0]["value"]) if labels else str(control["id"]).upper()


def _last_prose(part: dict[str, Any]) -> dict[str, Any] | None:
    for child in reversed(part.get("parts", [])):
        found = _last_prose(child)
        if found is not None:
            return found
    return part if part.get("prose") else None


def write_subset(
    source: Path,
    target: Path,
    *,
    version: str,
    keep: list[str],
    reworded: dict[str, str] | None = None,
) -> Path:
    """The catalog at `source` as version `version`, with only the controls labelled in
    `keep` (no enhancements) and, for each label in `reworded`, that text added to the
    last sentence of its statement."""
    document = json.loads(source.read_text(encoding="utf-8"))
    catalog = document["catalog"]
    catalog["metadata"]["version"] = version
    catalog.pop("back-matter", None)
    groups = []
    for group in catalog.get("groups", []):
        controls = [dict(c) for c in group.get("controls", []) if _label(c) in keep]
        for control in controls:
            control.pop("controls", None)
            added = (reworded or {}).get(_label(control))
            statement = next(p for p in control["parts"] if p["name"] == "statement")
            last = _last_prose(statement) if added else None
            if last is not None:
                last["prose"] = f"{last['prose']}{added}"
        if controls:
            groups.append(group | {"controls": controls})
    catalog["groups"] = groups
    target.write_text(json.dumps(document, indent=1), encoding="utf-8")
    return target
