"""Unfilled templates: a passage that still holds placeholders was never adopted.

A policy template that says "{{companyShortName}} backs up data daily" states what a
company could do, not what this one does; it is listed beside the evidence, marked
`template_not_adopted`, and never counted as evidence.
"""

from __future__ import annotations

import re

# Each pattern is a kind of placeholder seen in published templates.
_PLACEHOLDERS = (
    # Mustache / Handlebars / Jinja variables and sections: {{companyShortName}}, {{#hipaa}}
    re.compile(r"\{\{[^{}\n]{1,80}\}\}|\{%[^%\n]{1,80}%\}"),
    # Shell or JS style: ${company_name}
    re.compile(r"\$\{[A-Za-z_][\w.]{0,60}\}"),
    # NIST organisation-defined parameters never filled in: [Assignment: ...], [Selection: ...]
    # ("[FedRAMP Assignment: at least annually]" is a value FedRAMP set: not a placeholder)
    re.compile(r"(?<!FedRAMP )\[(?:Assignment|Selection)(?: \(one or more\))?:[^\]]{1,200}\]"),
    # Angle-bracket prompts: <Information System Abbreviation>, <Date of PA>, <insert name>
    re.compile(r"<(?:[A-Z][A-Za-z/&-]*|insert|enter)(?: [A-Za-z/&-]+){0,6}>"),
    # Bracketed prompts: [Company Name], [Insert date], [ORGANIZATION]
    re.compile(
        r"\[(?:insert|enter|company|organi[sz]ation|name of|your )[^\]\n]{0,60}\]", re.IGNORECASE
    ),
    re.compile(r"\[[A-Z][A-Z _]{3,40}\]"),
)


def placeholders(text: str) -> list[str]:
    """The placeholders in `text`, in order of appearance (duplicates kept once)."""
    found: dict[str, int] = {}
    for pattern in _PLACEHOLDERS:
        for match in pattern.finditer(text):
            found.setdefault(match.group(0), match.start())
    return sorted(found, key=found.__getitem__)


def is_unfilled_template(text: str) -> bool:
    return bool(placeholders(text))
