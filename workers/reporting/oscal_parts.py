"""What the OSCAL exports share: stable ids, tokens, metadata whose parties and roles are
the assessment's people (oscal_people.py), and the back-matter resources
for the catalogues the assessment rests on (NIST SP 800-53 rev5, the SCF workbook)."""

from __future__ import annotations

import re
import uuid
from typing import Any

from orchestrator.catalog.scf_frameworks import requirement_sort_key
from orchestrator.contracts.fedramp_settings import FEDRAMP_SYSTEM, MARK, SSP_HREF, refusal
from workers.analysis.nist_crosswalk import CATALOG_HREF, oscal_control_id
from workers.reporting.oscal_people import assessment_people
from workers.reporting.render import ReportInput

NS = "https://lifecycle.example/ns/oscal"
FEDRAMP_NS = "https://fedramp.gov/ns/oscal"
#: FedRAMP accepts an assessment plan link of 'application/json' or 'text/xml' only.
AP_MEDIA_TYPE = "application/json"
SSP_PLACEHOLDER = "./system-security-plan.json"
_UUID_NAMESPACE = uuid.UUID("c5a0d0a8-4c3e-4e4b-9a7f-0b9d1c1f0a11")
_TOKEN_START = re.compile(r"^[_A-Za-z]")


def stable_uuid(*parts: str) -> str:
    """Stable ids: the same report gives the same document."""
    return str(uuid.uuid5(_UUID_NAMESPACE, "\n".join(parts)))


def token(value: str) -> str:
    text = re.sub(r"[^A-Za-z0-9_.-]", "_", value)
    return text if _TOKEN_START.match(text) else f"req-{text}"


def clean(value: Any) -> Any:
    """Empty values dropped; titles on one line, as OSCAL's markup-line requires."""
    if isinstance(value, dict):
        return {
            k: (" ".join(v.split()) if k == "title" and isinstance(v, str) else clean(v))
            for k, v in value.items()
            if v not in (None, "", [], {}) or k == "include-all"
        }
    if isinstance(value, list):
        return [clean(v) for v in value]
    return value


def party_uuid(person: str) -> str:
    return stable_uuid("party", person)


def metadata(report: ReportInput, title: str, moment: str) -> dict[str, Any]:
    """Roles and parties: the assessment's people (oscal_people.py), each with their roles."""
    from trestle.oscal import OSCAL_VERSION

    people = assessment_people(report)
    roles: dict[str, list[str]] = {}
    for person in people:
        for role in person.roles:
            roles.setdefault(token(role), []).append(person.name)
    return {
        "title": title,
        "last-modified": moment,
        "version": "1.0",
        "oscal-version": OSCAL_VERSION,
        "roles": [
            {"id": role, "title": role.replace("_", " ").replace("-", " ").title()}
            for role in sorted(roles)
        ],
        "parties": [
            {"uuid": party_uuid(person.name), "type": "person", "name": person.name}
            for person in people
        ],
        "responsible-parties": [
            {"role-id": role, "party-uuids": [party_uuid(p) for p in roles[role]]}
            for role in sorted(roles)
        ],
        "remarks": str(report.scope.get("attribution") or "")[:2000] or None,
    }


def actors(people: list[str]) -> list[dict[str, Any]] | None:
    """An `origins` entry naming these people as its actors (none: no origin)."""
    if not people:
        return None
    return [{"actors": [{"type": "party", "actor-uuid": party_uuid(p)} for p in people]}]


def responsible(by_role: dict[str, list[str]]) -> list[dict[str, Any]] | None:
    """`responsible-roles` naming these people in their roles (roles metadata defines)."""
    return [
        {"role-id": token(role), "party-uuids": [party_uuid(p) for p in people]}
        for role, people in by_role.items()
        if people
    ] or None


def nist_resource_uuid(report: ReportInput) -> str:
    return stable_uuid(report.title, "nist-sp-800-53-rev5")


def catalogue_resources(report: ReportInput) -> list[dict[str, Any]]:
    """The NIST catalogue the reviewed controls resolve in, and the SCF workbook."""
    catalog = report.gaps.get("catalog") or report.scope.get("catalog") or {}
    return [
        {
            "uuid": nist_resource_uuid(report),
            "title": "NIST SP 800-53 Rev 5 catalog (OSCAL)",
            "description": "The catalogue the reviewed control ids resolve in (public domain).",
            "props": [{"name": "type", "value": "catalog"}],
            "rlinks": [{"href": CATALOG_HREF, "media-type": "application/oscal.catalog+json"}],
        },
        {
            "uuid": stable_uuid(report.title, "scf"),
            "title": f"Secure Controls Framework (SCF) {catalog.get('version', '')}".strip(),
            "description": str(
                report.gaps.get("attribution") or "Secure Controls Framework (SCF), CC BY-ND 4.0"
            ),
            "props": [{"name": "type", "value": "guidance"}],
            "rlinks": [{"href": "https://securecontrolsframework.com"}],
        },
    ]


def reviewed_controls(report: ReportInput) -> dict[str, Any]:
    """NIST SP 800-53 rev5 ids of every assessed requirement, through the SCF crosswalk."""
    ids: set[str] = set()
    for row in [*report.gaps.get("gaps", []), *report.gaps.get("met", [])]:
        ids.update(str(i) for i in row.get("nist_controls") or [])
    selection: dict[str, Any] = (
        {"include-controls": [{"control-id": oscal_control_id(i)} for i in _ordered(ids)]}
        if ids
        else {"include-all": {}}
    )
    return {
        "description": "The NIST SP 800-53 rev5 controls the assessed requirements map to "
        "through the SCF workbook's crosswalk.",
        "links": [{"href": f"#{nist_resource_uuid(report)}", "rel": "reference"}],
        "control-selections": [selection],
    }


def ssp_href(report: ReportInput) -> dict[str, Any]:
    """The operator's SSP link; an empty or placeholder setting is never written as
    though it were one: a marked placeholder says which setting to set."""
    refused = refusal(SSP_HREF, report.ssp_href)
    if refused is None:
        return {"href": report.ssp_href.strip()}
    return {"href": SSP_PLACEHOLDER, "remarks": f"{MARK} {refused}"}


def _ordered(ids: set[str]) -> list[str]:
    return sorted(ids, key=requirement_sort_key)


def fedramp_as_written(document: Any) -> None:
    """The OSCAL models read FedRAMP's system (a facet's `system`, a system id's
    `identifier-type`) as a URL and write it back with a trailing slash; FedRAMP's rules
    compare it as a string, `https://fedramp.gov`, so it is put back as written."""
    if isinstance(document, dict):
        for key in ("system", "identifier-type"):
            if str(document.get(key)).rstrip("/") == FEDRAMP_SYSTEM:
                document[key] = FEDRAMP_SYSTEM
        for value in document.values():
            fedramp_as_written(value)
    elif isinstance(document, list):
        for item in document:
            fedramp_as_written(item)
