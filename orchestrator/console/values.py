"""How a draft's values read in the console: words, never JSON.

A cited passage reads "document § heading, p. N" with its excerpt and the judge's verdict;
a maturity criterion "Level 2 (met): ..."; a milestone "2027-01-31: ..."; any other
object as "name: value" pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Citation:
    label: str
    excerpt: str
    verdict: str


def is_citation(item: Any) -> bool:
    return isinstance(item, dict) and ("excerpt" in item or "chunk_id" in item)


def citation(item: dict[str, Any]) -> Citation:
    document = str(item.get("document") or item.get("filename") or "a document")
    heading = item.get("heading_path")
    if isinstance(heading, list):
        heading = " › ".join(str(h) for h in heading)
    label = document + (f" § {str(heading).replace(' > ', ' › ')}" if heading else "")
    pages = page_label(item)
    return Citation(
        label + (f", {pages}" if pages else ""),
        str(item.get("excerpt") or "").strip(),
        str(item.get("verdict") or ("supports the proposal" if item.get("supports") else "")),
    )


def page_label(item: dict[str, Any]) -> str:
    pages = [p for p in item.get("pages") or [] if isinstance(p, int)]
    first = pages[0] if pages else item.get("page_start")
    last = pages[-1] if pages else item.get("page_end")
    if not first:
        return ""
    return f"p. {first}" if not last or last == first else f"pp. {first}–{last}"


def pairs(value: dict[str, Any]) -> list[tuple[str, str]]:
    """An object as (name, value) pairs in words."""
    return [(str(k).replace("_", " "), words(v)) for k, v in value.items()]


def words(value: Any) -> str:
    if value is None or value == "":
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):
        return "; ".join(f"{k}: {v}" for k, v in pairs(value))
    if isinstance(value, list):
        return ", ".join(words(v) for v in value) or "none"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def kind_of(item: Any) -> str:
    """Which reading a list item gets: citation, criterion, milestone, object or text."""
    if is_citation(item):
        return "citation"
    if isinstance(item, dict) and "met" in item and "text" in item:
        return "criterion"
    if isinstance(item, dict) and "title" in item and "date" in item:
        return "milestone"
    return "object" if isinstance(item, dict) else "text"


def install(globals_: dict[str, Any]) -> None:
    globals_.update(citation=citation, words=words, pairs=pairs, kind_of=kind_of)
