"""The order in which an owner is proposed: a cited document's owner (as the roster names
them), the roster's owner of the SCF domain, the person with the domain's usual title, the
roster's control owner; a role only with no roster and no document owner, saying so."""

from __future__ import annotations

from workers.analysis.owner_proposal import OwnerProposer, Someone
from workers.analysis.owner_roles import OWNER_ROLES

ANA = Someone("Ana Silva", "ana@example.org", None, ("owner",), None, ())
BO = Someone("Bo Chen", None, "user:bo", ("control_owner",), None, ())
CY = Someone("Cy Diaz", "cy@example.org", None, ("isso",), OWNER_ROLES["IAC"], ())
DEE = Someone("Dee Nkem", "dee@example.org", None, ("control_owner",), None, ("HRS",))
PROPOSER = OwnerProposer([ANA, BO, CY, DEE], {"hr.md": "DEE@example.org", "it.md": "Pat Roe"})


def _said(control_ids: list[str], documents: list[str]) -> tuple[str, str, str]:
    found = PROPOSER.propose(control_ids, documents)
    return found["proposed_owner"], found["proposed_owner_kind"], found["proposed_owner_source"]


def test_a_cited_documents_owner_comes_first_as_the_roster_names_them() -> None:
    assert _said(["IAC-01"], ["none.md", "hr.md"]) == (
        "Dee Nkem",
        "person",
        "owner of the cited document hr.md (on the roster)",
    )
    assert _said(["HRS-01"], ["it.md"]) == (
        "Pat Roe",
        "person",
        "owner of the cited document it.md (not on the roster)",
    )


def test_then_the_domains_owner_then_its_usual_title_then_the_control_owner() -> None:
    assert _said(["IAC-01", "HRS-02"], []) == (
        "Dee Nkem",
        "person",
        "roster: owns the SCF HRS domain",
    )
    name, _, source = _said(["IAC-01"], [])
    assert name == "Cy Diaz" and source.startswith(f"roster: their title is {OWNER_ROLES['IAC']}")
    name, _, source = _said(["TPM-01"], [])
    assert name == "Bo Chen" and source.startswith("roster: the assessment's control owner")
    only_owner = OwnerProposer([ANA], {})
    assert only_owner.propose(["TPM-01"], [])["proposed_owner"] == "Ana Silva"


def test_a_role_only_without_a_roster_or_a_document_owner_and_it_says_so() -> None:
    found = OwnerProposer([], {"hr.md": "Dee Nkem"}).propose(["TPM-01"], ["it.md"])
    assert (found["proposed_owner"], found["proposed_owner_kind"]) == (
        OWNER_ROLES["TPM"],
        "role",
    )
    assert found["proposed_owner_source"].startswith("role, not a person: the assessment has no")
    assert found["proposed_owner_person"] is None
