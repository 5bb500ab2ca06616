"""Approval, date, owner and company fields left unfilled: a document drafted, not adopted.

A policy whose "Approved by" reads "[Security Officer]", whose date is "TBD" or whose
owner is "{{owner}}" has not been approved by anyone yet, however complete its practice
text is: an assessor reads it as a draft. So is one that still calls the organisation
"[Company Name]" or "{{companyShortName}}". This is decided for the whole document, from
its field lines ("Approved by: ...", "| Created Date | [Date] |") and its company
placeholders; a reviewer may override it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# What a field that makes a document adopted is called: who approved, owns or signed it,
# when, and for which organisation.
_FIELD = re.compile(
    r"^(?:document\s+|policy\s+|plan\s+|procedure\s+)?(?:"
    r"approved\s+by|approv(?:al|er)s?(?:\s+(?:date|name|signature))?|authori[sz]ed\s+by|"
    r"signed(?:\s+by)?|signature(?:\s+date)?|prepared\s+by|"
    r"(?:created|creation|effective|issue|issued|version|review|next\s+review|revision|"
    r"publication|approval|last\s+reviewed?|adoption)\s+date|date(?:\s+approved)?|"
    r"owner|owned\s+by|responsible\s+(?:person|officer)|"
    r"company(?:\s+name)?|organi[sz]ation(?:\s+name)?"
    r")$",
    re.IGNORECASE,
)
# A value left for someone to fill in: bracketed, braced, angled, underscored or "TBD".
_UNFILLED = re.compile(
    r"^(?:\[[^\]\n]{0,80}\](?![(\[])|\{\{?[^{}\n]{0,80}\}?\}|<[^<>\n]{1,60}>|\$\{[^}\n]{1,60}\}"
    r"|_{3,}|\.{4,}|tb[dca]|to\s+be\s+(?:determined|confirmed|decided|defined|agreed|added)"
    r"|(?:dd|mm|xx)[/.-](?:mm|dd|xx)[/.-](?:yy|yyyy|xx|xxxx))\W*$",
    re.IGNORECASE,
)
# A company placeholder anywhere in the text: the document was never made this one's.
_COMPANY = re.compile(
    r"\[(?:your\s+|insert\s+)?(?:company|organi[sz]ation)(?:['’]s)?(?:\s+(?:short\s+)?name)?\]"
    r"|\{\{\s*(?:company|organi[sz]ation)[\w.]*\s*\}\}|<(?:company|organi[sz]ation)(?:\s+name)?>"
    r"|\$\{(?:company|organi[sz]ation)\w*\}",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"[*`]+|(?<!_)_(?!_)")  # emphasis, not a blank line of underscores
_TABLE_RULE = re.compile(r"^\|?[\s:|-]+\|?$")


def unfilled_fields(passages: Sequence[str]) -> list[str]:
    """The unfilled fields of a document ("Approved By: [Date]"), each once, in order."""
    found: dict[str, None] = {}
    for text in passages:
        for line in text.splitlines():
            field = _field(line)
            if field is not None:
                found.setdefault(field, None)
        for match in _COMPANY.finditer(text):
            found.setdefault(match.group(0), None)
    return list(found)


def _field(line: str) -> str | None:
    """`Label: value` or a table row `| Label | value |` whose label names an adoption
    field and whose value is left to fill in, as "Label: value"."""
    plain = line.strip()
    if not plain or _TABLE_RULE.match(plain):
        return None
    if plain.startswith("|"):
        cells = [cell.strip() for cell in plain.strip("|").split("|")]
        if len(cells) < 2:
            return None
        label, value = cells[0], cells[1]
    elif ":" in plain:
        label, value = plain.split(":", 1)
    else:
        return None
    label = _MARKUP.sub("", label).strip(" -•").rstrip(":").strip()
    value = _MARKUP.sub("", value).strip()
    if not _FIELD.match(label) or not _UNFILLED.match(value):
        return None
    return f"{label}: {value}"
