"""The two settings a FedRAMP OSCAL export names the system by, and what counts as a
placeholder for them: empty, an example domain, a word that stands for "not yet"
("placeholder", "TBD", "TODO", "changeme", ...), or an id of one repeated digit (the
all-zero uuid). The OSCAL exports write a marked placeholder instead of such a value, and
an export asked for FedRAMP is refused while one stands, naming the setting to set."""

from __future__ import annotations

import re
from dataclasses import dataclass

FEDRAMP_SYSTEM = "https://fedramp.gov"
"""FedRAMP's identifier type for a system id (and the system of its risk facets)."""
MARK = "Placeholder:"
"""How an export's import-ssp remarks begin where it wrote a placeholder link."""


@dataclass(frozen=True)
class Setting:
    name: str
    variable: str
    what: str


SSP_HREF = Setting(
    "oscal_ssp_href", "LIFECYCLE_OSCAL_SSP_HREF", "the link to the system's OSCAL SSP"
)
SYSTEM_ID = Setting(
    "oscal_system_id", "LIFECYCLE_OSCAL_SYSTEM_ID", "the system's FedRAMP-assigned id"
)

_EXAMPLE = re.compile(r"(^|[/.@])example(\.(com|org|net|edu)|/|$)|\.(example|invalid|test)\b")
_NOT_YET = re.compile(
    r"\b(placeholder|tbd|tba|todo|fixme|changeme|change[-_ ]me|replace[-_ ]?me|xxx+|"
    r"n/a|none|null|unknown|dummy|sample|lorem)\b"
)
_ONE_DIGIT_ID = re.compile(r"^([0-9a-f])(\1|-)*$")


def placeholder(value: str) -> str | None:
    """Why `value` is a placeholder, or None for a value that may be the real one."""
    text = value.strip().lower()
    if not text:
        return "it is empty"
    if _EXAMPLE.search(text):
        return f"{value!r} is an example address"
    if _NOT_YET.search(text):
        return f"{value!r} stands for a value not yet known"
    if _ONE_DIGIT_ID.match(text) and len(text.replace("-", "")) >= 8:
        return f"{value!r} is an id of one repeated digit"
    return None


def refusal(setting: Setting, value: str) -> str | None:
    """The sentence a refused export says for this setting, or None when it may stand."""
    why = placeholder(value)
    if why is None:
        return None
    return (
        f"{setting.name} ({setting.variable}), {setting.what}, is a placeholder: {why}. "
        f"Set it, then draft the report again."
    )
