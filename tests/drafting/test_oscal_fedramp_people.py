"""The OSCAL assessment plan's FedRAMP people: the roster's people in FedRAMP's roles (the
mapping of orchestrator.contracts.fedramp_roles), one party per person, and the assessing
organisation from the settings; nobody invented where the roster has no one."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.fedramp_roles import FEDRAMP_ROLES, ROSTER_ROLES
from orchestrator.service.roster import RosterRole
from workers.reporting.oscal_fedramp_people import ISO_17020, with_fedramp_people
from workers.reporting.oscal_parts import FEDRAMP_NS, clean, metadata
from workers.reporting.render import ReportInput

APPROVER = "user:lead@assessor.org"
SIGNOFF = [{"kind": "soa", "approvals": [{"approver_id": APPROVER, "roles": ["assessor"]}]}]
ROSTER: list[dict[str, Any]] = [
    {"name": "Ana Lima", "email": "ana@assessor.org", "principal": APPROVER,
     "telephone": "+1 202 555 0143", "roles": ["assessment_lead"]},
    {"name": "Ben Okafor", "email": "ben@assessor.org", "principal": None, "roles": ["assessor"]},
    {"name": "Chris Vale", "email": "chris@acme.com", "principal": None,
     "roles": ["csp_poc", "csp_end_of_testing_poc"]},
    {"name": "Acme NOC", "email": "noc@acme.com", "principal": None,
     "roles": ["csp_operations_center"]},
    {"name": "Dee Marsh", "email": "dee@acme.com", "principal": None, "roles": ["control_owner"]},
]  # fmt: skip


def _report(roster: list[dict[str, Any]], assessor: dict[str, str] | None = None) -> ReportInput:
    return ReportInput(
        title="t",
        assessment_name="a",
        as_of="2025-01-01 00:00 UTC",
        soa={},
        gaps={},
        maturity={},
        poam={},
        signoff=SIGNOFF,
        roster=roster,
        assessor=assessor or {},
    )


def _plan_metadata(report: ReportInput) -> dict[str, Any]:
    from trestle.oscal.common import Metadata

    meta = clean(with_fedramp_people(report, metadata(report, "plan", "2025-01-01T00:00:00Z")))
    Metadata.model_validate(meta)  # valid OSCAL
    return meta  # type: ignore[no-any-return]


def test_every_roster_role_the_mapping_names_is_one_a_person_can_have() -> None:
    assert set(ROSTER_ROLES) <= set(RosterRole)


def test_roster_people_fill_fedramps_roles_each_one_party() -> None:
    meta = _plan_metadata(_report(ROSTER))
    parties = {p["uuid"]: p for p in meta["parties"]}
    names = {p["name"]: p for p in parties.values()}
    # The lead the run already names (an approver) stays that one party, with their email.
    lead = names[APPROVER]
    assert lead["email-addresses"] == ["ana@assessor.org"] and "Ana Lima" not in names
    assert lead["telephone-numbers"] == [{"number": "+1 202 555 0143"}]
    assert "telephone-numbers" not in names["Ben Okafor"]
    held = {r["role-id"]: [parties[u]["name"] for u in r["party-uuids"]] for r in
            meta["responsible-parties"]}  # fmt: skip
    assert held["assessment-team"] == [APPROVER, "Ben Okafor"]
    assert held["assessment-lead"] == [APPROVER]
    assert held["csp-assessment-poc"] == ["Chris Vale", "Acme NOC"]
    assert held["csp-operations-center"] == ["Acme NOC"]
    assert held["csp-end-of-testing-poc"] == ["Chris Vale"]
    assert held["assessor"] == [APPROVER]  # the approval's own role stays
    # Nobody receives the results: the role is left out, not given to someone invented.
    assert "csp-results-poc" not in held
    assert "csp-results-poc" not in {r["id"] for r in meta["roles"]}
    assert {r["id"] for r in meta["roles"]} >= {r for r in held}
    # A roster person in no FedRAMP role is not in the plan's FedRAMP people.
    assert "Dee Marsh" not in names
    assert all(p["type"] == "person" for p in parties.values())
    assert "locations" not in meta


def test_an_empty_roster_adds_no_one() -> None:
    report = _report([])
    plain = clean(metadata(report, "plan", "2025-01-01T00:00:00Z"))
    assert _plan_metadata(report) == plain
    assert not {r.id for r in FEDRAMP_ROLES} & {r["id"] for r in plain["roles"]}


def test_the_assessing_organisation_from_the_settings() -> None:
    assessor = {"name": "Assessor Org LLC", "iso17020_id": "1234.01",
                "address": "100 Main Street; ; Arlington, VA 22201"}  # fmt: skip
    meta = _plan_metadata(_report(ROSTER, assessor))
    [location] = meta["locations"]
    assert location["address"]["addr-lines"] == ["100 Main Street", "Arlington, VA 22201"]
    parties = {p["name"]: p for p in meta["parties"]}
    organisation = parties["Assessor Org LLC"]
    assert organisation["type"] == "organization"
    assert organisation["props"] == [{"name": ISO_17020, "ns": FEDRAMP_NS, "value": "1234.01"}]
    assert organisation["location-uuids"] == [location["uuid"]]
    # The assessment team are its members; the CSP's contacts are not.
    assert parties["Ben Okafor"]["member-of-organizations"] == [organisation["uuid"]]
    assert "member-of-organizations" not in parties["Chris Vale"]
    # Only a name: the organisation, without an accreditation or a location.
    meta = _plan_metadata(_report(ROSTER, {"name": "Assessor Org LLC"}))
    organisation = next(p for p in meta["parties"] if p["name"] == "Assessor Org LLC")
    assert "props" not in organisation and "locations" not in meta
