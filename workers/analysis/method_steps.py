"""The SCF "methods to comply" of a control, as steps a recommendation can name: the
generic practices only. The workbook lists vendor products beside practices ("ServiceNow
(https://...)", "Splunk", "AirWatch"); a recommendation names what to do, never what to buy,
so a line with a URL, a product the catalogue names with a URL elsewhere, a brand spelled
with an inner capital, or a bare single word is left out."""

from __future__ import annotations

import re

from orchestrator.catalog.model import CatalogControl, LoadedCatalog

_URL = re.compile(r"https?://|www\.|\b[\w-]+\.(?:com|io|org|net)\b", re.IGNORECASE)
#: A brand spelled with a capital inside a word: "ServiceNow", "AirWatch", "CimTrak".
_INNER_CAPITAL = re.compile(r"\b[A-Z]?[a-z]+[A-Z][A-Za-z]*\b")
_PRODUCT_BEFORE_URL = re.compile(r"^\s*[-•*]?\s*([^()\n]+?)\s*\(\s*https?://", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-•*]\s*")
#: Vendors and products the workbook names without a URL (lower case, whole words).
VENDORS = frozenset(
    {
        "active directory",
        "airwatch",
        "aruba",
        "bradford networks",
        "casper",
        "cisco",
        "juniper",
        "landesk",
        "microsoft",
        "packet fence",
        "remedy",
        "sccm",
        "sdelete",
        "sophos",
        "splunk",
        "symantec",
        "sysinternals",
        "windows",
        "intune",
        "okta",
        "jamf",
        "crowdstrike",
        "mcafee",
        "tenable",
        "qualys",
        "rapid7",
        "nessus",
    }
)


def product_names(catalog: LoadedCatalog) -> frozenset[str]:
    """Names the workbook gives with a vendor URL anywhere in its methods (lower case)."""
    cached = catalog.__dict__.get("_product_names")
    if cached is None:
        found: set[str] = set()
        for control in catalog.controls:
            text = str(control.details.get("methods_to_comply") or "")
            found.update(m.group(1).strip().lower() for m in _PRODUCT_BEFORE_URL.finditer(text))
        cached = frozenset(n for n in found if n)
        object.__setattr__(catalog, "_product_names", cached)
    return frozenset(cached) | VENDORS


def generic_methods(catalog: LoadedCatalog, control: CatalogControl) -> list[str]:
    """The control's methods to comply that name a practice, not a product."""
    products = product_names(catalog)
    kept: list[str] = []
    for raw in str(control.details.get("methods_to_comply") or "").splitlines():
        line = " ".join(_BULLET.sub("", raw).split()).rstrip(".")
        if not line or names_a_product(line, products):
            continue
        if len(line.split()) < 2:
            continue  # "Splunk", "SCCM", "Remedy": a bare name is a product more often than not
        if line not in kept:
            kept.append(line)
    return kept


def names_a_product(text: str, products: frozenset[str]) -> bool:
    if _URL.search(text) or _INNER_CAPITAL.search(text):
        return True
    lowered = text.lower()
    return any(re.search(rf"(?<!\w){re.escape(p)}(?!\w)", lowered) for p in products)


def evidence_artifacts(catalog: LoadedCatalog, control_id: str) -> list[str]:
    """The SCF Evidence Request List artifacts that show the control operates."""
    return [
        str(request.get("artifact"))
        for request in catalog.details.get("evidence_requests", ())
        if control_id in (request.get("control_ids") or ()) and request.get("artifact")
    ]
