"""Unfilled templates: placeholders and prompts left for an author to fill in.

A policy template that says "{{companyShortName}} backs up data daily" states what a
company could do, not what this one does. `placeholders` finds the marks in a passage;
whether a whole document is a template is decided from their share (see `adoption`).

Brackets are also used for links, checkboxes, citations and values a baseline set, so
those are told apart here: `[text](url)`, `[text][ref]`, `[ref]: url`, `[ ]`, `[x]`,
`[1]` and "[FedRAMP Assignment: at least annually]" are not placeholders.
"""

from __future__ import annotations

import re

# HTML tags that survive in Markdown: `<br>` is markup, not a prompt.
_HTML_TAGS = (
    "a|b|i|u|s|p|br|hr|em|strong|code|pre|div|span|img|sup|sub|ul|ol|li|table|thead|tbody"
    "|tr|td|th|details|summary|center|font|small|big|h[1-6]|blockquote|kbd|mark|del|ins"
)
# Words that make a lower-case bracket a prompt rather than prose in brackets.
_PROMPT_WORDS = (
    r"insert|enter|add|list|name|date|title|company|organi[sz]ation|address|number|amount"
    r"|your|describe|specify|select|choose|type|value|day|month|year|phone|e-?mail|contact"
    r"|person|role|owner's|x{1,3}"
)

# A Markdown reference definition, "[1]: approved-vendors.md", names a link target.
_REFERENCE = re.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]+\S", re.MULTILINE)

# Each pattern is a kind of placeholder seen in published templates.
_PLACEHOLDERS = (
    # Mustache / Handlebars / Jinja variables: {{companyShortName}}, {{ name }}, {% if x %}
    re.compile(r"\{\{[^{}\n]{1,80}\}\}|\{%[^%\n]{1,80}%\}"),
    # Shell or JS style: ${company_name}
    re.compile(r"\$\{[A-Za-z_][\w.]{0,60}\}"),
    # NIST organisation-defined parameters never filled in: [Assignment: ...], [Selection: ...]
    # ("[FedRAMP Assignment: at least annually]" is a value FedRAMP set: not a placeholder)
    re.compile(r"(?<!FedRAMP )\[(?:Assignment|Selection)(?: \(one or more\))?:[^\]]{1,200}\]"),
    # Angle-bracket prompts: <Information System Abbreviation>, <Date of PA>, <insert name>
    re.compile(r"<(?:[A-Z][A-Za-z/&-]*|insert|enter)(?: [A-Za-z/&-]+){0,6}>"),
    # Lower-case angle prompts that name what to write: <company name>, <date>
    re.compile(
        rf"<(?!(?:{_HTML_TAGS})\b[^>]*>)(?:[a-z][\w/&-]*)?(?: ?[\w/&-]+){{0,6}}?"
        rf"\b(?:{_PROMPT_WORDS})\b[\w /&-]{{0,40}}>",
        re.IGNORECASE,
    ),
    # Square-bracket prompts in any case: [Company Name], [Insert date], [list …],
    # [job title], [day/month/year]; never a link, reference, checkbox or citation.
    re.compile(
        r"(?<![\]\\!])\[(?!\s*[xX ]?\s*\])(?!\d+\])(?!FedRAMP )(?!§)"
        r"(?![^\]\n]*@)(?![^\]\n]*://)"
        r"([^\[\]\n]*[A-Za-z][^\[\]\n]{0,80})\](?![(\[])"
    ),
)


def placeholders(text: str) -> list[str]:
    """The placeholders in `text`, in order of appearance (duplicates kept once)."""
    found: dict[str, int] = {}
    definitions = {m.start() + m.group(0).index("[") for m in _REFERENCE.finditer(text)}
    for pattern in _PLACEHOLDERS:
        for match in pattern.finditer(text):
            if match.start() not in definitions:
                found.setdefault(match.group(0), match.start())
    return sorted(found, key=found.__getitem__)


def is_unfilled_template(text: str) -> bool:
    return bool(placeholders(text))
