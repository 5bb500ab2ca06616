"""FedRAMP's people in the OSCAL assessment plan: the roster's people in FedRAMP's roles
(assessment team and lead, the CSP's points of contact: the mapping is
orchestrator.contracts.fedramp_roles), and the assessing organisation with its ISO/IEC
17020 accreditation and address where the settings give them.

Only people on the roster fill a role: a FedRAMP role nobody fills is left out, never
given an invented person. A roster person the run already names (their principal, email
or name is a party of the plan: an approver, a reviewer, an owner) stays that one party,
with their email and FedRAMP roles added.
"""

from __future__ import annotations

import copy
from typing import Any

from orchestrator.contracts.fedramp_roles import ASSESSMENT_LEAD, ASSESSOR, fedramp_roles_of
from workers.reporting.oscal_parts import FEDRAMP_NS, stable_uuid
from workers.reporting.render import ReportInput

ISO_17020 = "iso-iec-17020-identifier"


def with_fedramp_people(report: ReportInput, metadata: dict[str, Any]) -> dict[str, Any]:
    """The plan's metadata with the roster's FedRAMP roles filled and the assessing
    organisation (and its location) added."""
    meta = copy.deepcopy(metadata)
    parties: list[dict[str, Any]] = meta.setdefault("parties", [])
    by_name = {str(p["name"]): p for p in parties}
    organisation = _organisation(report, meta)
    filled: dict[str, list[str]] = {}
    titles: dict[str, str] = {}
    for person in report.roster:
        roles = fedramp_roles_of([str(r) for r in person.get("roles") or []])
        if not roles:
            continue
        party = _party(person, by_name)
        if party not in parties:
            parties.append(party)
        for field, value in (
            ("email-addresses", person.get("email")),
            ("telephone-numbers", person.get("telephone")),
        ):
            _add(party, field, value)
        on_team = {ASSESSMENT_LEAD, ASSESSOR} & set(person.get("roles") or [])
        if organisation is not None and on_team:
            party["member-of-organizations"] = [organisation["uuid"]]
        for role in roles:
            titles[role.id] = role.title
            if party["uuid"] not in filled.setdefault(role.id, []):
                filled[role.id].append(party["uuid"])
    if organisation is not None:
        parties.append(organisation)
    defined = {r["id"] for r in meta.setdefault("roles", [])}
    meta["roles"] += [{"id": r, "title": titles[r]} for r in filled if r not in defined]
    meta.setdefault("responsible-parties", []).extend(
        {"role-id": role, "party-uuids": uuids} for role, uuids in filled.items()
    )
    return meta


def _add(party: dict[str, Any], field: str, value: Any) -> None:
    """An email address or telephone number added to the party, once."""
    if not value:
        return
    entry: Any = str(value) if field == "email-addresses" else {"number": str(value)}
    if entry not in party.setdefault(field, []):
        party[field].append(entry)


def _party(person: dict[str, Any], by_name: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The plan's party for a roster person: the one the run already names them by, else a
    new person party."""
    for key in ("principal", "email", "name"):
        known = by_name.get(str(person.get(key) or ""))
        if known is not None:
            return known
    contact = str(person.get("email") or person.get("principal"))
    return {
        "uuid": stable_uuid("party", "roster", contact),
        "type": "person",
        "name": str(person["name"]),
    }


def _organisation(report: ReportInput, meta: dict[str, Any]) -> dict[str, Any] | None:
    """The assessing organisation's party (and its address as the metadata's location),
    from the settings; None while its name is not set."""
    name = str(report.assessor.get("name") or "")
    if not name:
        return None
    party: dict[str, Any] = {
        "uuid": stable_uuid("party", "assessor", name),
        "type": "organization",
        "name": name,
    }
    accreditation = str(report.assessor.get("iso17020_id") or "")
    if accreditation:
        party["props"] = [{"name": ISO_17020, "ns": FEDRAMP_NS, "value": accreditation}]
    lines = [line.strip() for line in str(report.assessor.get("address") or "").split(";")]
    lines = [line for line in lines if line]
    if lines:
        location = {
            "uuid": stable_uuid("location", "assessor", name),
            "title": f"{name} (the assessor)",
            "address": {"addr-lines": lines},
        }
        meta.setdefault("locations", []).append(location)
        party["location-uuids"] = [location["uuid"]]
    return party
