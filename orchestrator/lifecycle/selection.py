"""What a framework selection names: the frameworks, and the categories chosen with them
(checked against the catalogues at the door; here only their shape)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The key a list of categories is kept under: it applies to every selected framework.
EVERY_FRAMEWORK = "*"


def selected_frameworks(payload: Mapping[str, Any]) -> tuple[str, ...]:
    """The framework names of a framework_selected payload: `frameworks` (a list) or the
    single `framework`; blanks and repeats dropped. Empty when neither is usable."""
    raw = payload.get("frameworks")
    names = raw if isinstance(raw, list) else [payload.get("framework")]
    cleaned: list[str] = []
    for name in names:
        text = str(name or "").strip() if isinstance(name, str | None) else ""
        if text and text not in cleaned:
            cleaned.append(text)
    return tuple(cleaned)


def selected_categories(payload: Mapping[str, Any]) -> dict[str, tuple[str, ...]] | None:
    """The payload's `categories` as {framework name or "*": category names}: a list
    applies to every selected framework that has categories. Absent: {}; malformed: None."""
    raw = payload.get("categories")
    if raw is None:
        return {}
    if isinstance(raw, list):
        raw = {EVERY_FRAMEWORK: raw}
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, tuple[str, ...]] = {}
    for key, names in raw.items():
        if not isinstance(key, str) or not key.strip() or not isinstance(names, list):
            return None
        if not all(isinstance(n, str) and n.strip() for n in names):
            return None
        out[key.strip()] = tuple(dict.fromkeys(n.strip() for n in names))
    return out
