"""Whether a document was adopted, or is a template or blank form, from its text.

The decision is the document's, not a passage's: a form whose every field is empty is
set aside whole, even its passages that happen to hold no placeholder, and a policy with
one stray bracket stays adopted. It rests on the share of the document's lines that are
left for an author to fill in: placeholders, instructions to the author, empty form
fields, unticked choice lists and questions with no answer after them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from workers.analysis.templates import placeholders

#: At least this share of prompt lines makes a document a template whatever its title.
TEMPLATE_SHARE = 0.5
#: A document that calls itself a template or form needs only this share.
SELF_DECLARED_SHARE = 0.25

_BULLET = re.compile(r"^\s*(?:[-*+•]|\(?[0-9a-zA-Z]{1,3}[.)])\s+")
# Instructions to whoever fills the document in, not to the staff who follow it.
_INSTRUCTIONS = (
    re.compile(
        r"^(?:describe|explain|summari[sz]e|outline|document) "
        r"(?:how|what|when|where|why|who|which|any|each|all|your"
        r"|the (?:process|method|approach))\b",
        re.IGNORECASE,
    ),
    re.compile(
        r"^(?:enter|insert|type|fill in|provide|specify|list|identify|add|include|state"
        r"|indicate|select|choose|complete)\b.{0,120}\b(?:here|below|above|in this "
        r"(?:section|table|field|box|column|document)|(?:your|the) (?:organi[sz]ation|company)'?s?"
        r"|the name of|name of the|the date|as applicable|if applicable)\b",
        re.IGNORECASE,
    ),
    re.compile(r"^(?:insert|enter|fill in) (?:the |a |an )?[a-z]", re.IGNORECASE),
    re.compile(
        r"^(?:instructions?|guidance|template guidance|note to (?:authors?|preparers?))\s*:",
        re.IGNORECASE,
    ),
)
# A list of choices with nothing ticked: "Implementation Status (check all that apply): ..."
_CHOICES = re.compile(r"\((?:check|select|tick|mark) (?:all that apply|one|any)\)|[☐□]", re.I)
# A field's label: "Responsible Role:", "Parameter AC-2(a):" (short, not a wrapped line).
_LABEL = re.compile(r"^[A-Z0-9][^.!?:;\s]*(?: [^.!?:;\s]+){0,4}:$")
# A table's row label with its cells empty: "Part a", "Part b", "Parameter AC-2(12)(a)".
_ROW_LABEL = re.compile(r"^([A-Z][A-Za-z]{1,15}) [\w().-]{1,20}:?$")
# A Markdown table row whose cells are empty or labels only: "| task 1: | | |".
_TABLE_ROW = re.compile(r"^\|.*\|$")
_QUESTION = re.compile(r"\?\s*$")
# Lines that carry no content of their own (admonitions, rules, lone punctuation).
_NOISE = re.compile(r"^(?:[-=_*#|~`.:!+\s]+|!!!\s*\w+.*|\\pagebreak|\W{0,3})$")


@dataclass(frozen=True)
class Adoption:
    adopted: bool
    basis: str
    prompt_lines: int
    lines: int
    prompt_passages: int
    passages: int


def prompt_lines(lines: Sequence[str]) -> list[bool]:
    """For each line of a passage, whether it is left for an author to fill in."""
    stripped = [_BULLET.sub("", line).strip() for line in lines]
    bullets = [bool(_BULLET.match(line)) for line in lines]
    marks = [_is_prompt(line) for line in stripped]
    # Form marks: the empty fields and choices of a form, as opposed to a placeholder
    # inside a sentence. A label before a placeholder sentence introduces it, but a
    # label before another empty field was itself left empty.
    form = [
        bool(_CHOICES.search(line) or _TABLE_ROW.match(line)) and marks[i]
        for i, line in enumerate(stripped)
    ]
    # Row labels count as empty rows only beside another alike.
    for index, line in enumerate(stripped):
        match = _ROW_LABEL.match(line)
        if match and not marks[index]:
            word = match.group(1)
            near = range(max(0, index - 1), min(len(stripped), index + 2))
            if any(
                j != index and (m := _ROW_LABEL.match(stripped[j])) and m.group(1) == word
                for j in near
            ):
                marks[index] = form[index] = True
    # From the bottom up, so a run of empty fields is seen from its end. A passage may
    # end anywhere, so its last line is never taken for an unanswered field.
    for index in range(len(stripped) - 2, -1, -1):
        line, after = stripped[index], index + 1
        if marks[index]:
            continue
        if _LABEL.match(line) or _QUESTION.search(line):
            if _LABEL.match(stripped[after]) or form[after]:
                marks[index] = form[index] = True
        elif form[after] and not bullets[index] and _is_caption(line):
            marks[index] = form[index] = True  # the caption of an empty table
    return marks


def _is_caption(line: str) -> bool:
    return len(line.split()) <= 8 and not line.endswith((".", ";", ",", ":"))


def _is_prompt(line: str) -> bool:
    if not line:
        return False
    if placeholders(line) or _CHOICES.search(line):
        return True
    if _TABLE_ROW.match(line):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        return all(not cell or cell.endswith(":") for cell in cells)
    return any(pattern.search(line) for pattern in _INSTRUCTIONS)


def _content_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not _NOISE.match(line.strip())]


def judge_adoption(passages: Sequence[str], *, self_declared: bool = False) -> Adoption:
    """Adopted or a template, from a document's passages in order. Passages overlap, so a
    line is counted once; `self_declared` is a title naming the document a template or form."""
    seen: set[str] = set()
    total = prompts = passages_with_prompts = 0
    for text in passages:
        lines = _content_lines(text)
        marks = prompt_lines(lines)
        passages_with_prompts += any(marks)
        for line, mark in zip(lines, marks, strict=True):
            key = " ".join(line.split())
            if key in seen:
                continue
            seen.add(key)
            total += 1
            prompts += mark
    share = prompts / total if total else 0.0
    bar = SELF_DECLARED_SHARE if self_declared else TEMPLATE_SHARE
    adopted = not (total and share >= bar)
    counted = (
        f"{prompts} of {total} lines are placeholders, prompts, instructions to the author "
        f"or empty form fields ({passages_with_prompts} of {len(passages)} passages hold one)"
    )
    if not total:
        basis = "no text to judge: taken as adopted"
    elif adopted:
        basis = f"{counted}: below the {bar:.0%} that marks a template; the rest is filled in"
    else:
        declared = "; its title calls it a template or form" if self_declared else ""
        basis = f"{counted}{declared}: a template or blank form, every passage set aside"
    return Adoption(adopted, basis, prompts, total, passages_with_prompts, len(passages))
