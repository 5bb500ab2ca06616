"""Who is proposed to own an SoA row or a gap finding: a person, and where the proposal
came from. A reviewer confirms it by setting the owner (an amendment), or names another.

In order: the owner of a document the row cites (the document's life owner), as the
roster names them where they are on it; the roster's person who owns the SCF domain of
the row's linked controls; the roster's person whose job title is the role that usually
runs that domain; the roster's control owner, else its owner. Only when the roster is
empty and no cited document has an owner is a role proposed, and the proposal says so.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.documents import CURRENT
from orchestrator.contracts.owner_sources import fallback, from_document, from_roster
from orchestrator.db.models import Document
from orchestrator.db.roster_models import RosterPerson
from workers.analysis.owner_roles import OWNER_ROLES, proposed_owner

PERSON = "person"
ROLE = "role"
#: The fields a proposal sets on a row, a finding or a POA&M item.
PROPOSAL_FIELDS = (
    "proposed_owner",
    "proposed_owner_kind",
    "proposed_owner_source",
    "proposed_owner_person",
)
#: Roster roles that own controls, most specific first.
OWNING_ROLES = ("control_owner", "owner")


@dataclass(frozen=True)
class Someone:
    name: str
    email: str | None
    principal: str | None
    roles: tuple[str, ...]
    title: str | None
    domains: tuple[str, ...]

    def matches(self, text: str) -> bool:
        wanted = text.strip().casefold()
        return wanted in {
            v.casefold() for v in (self.name, self.email, self.principal) if v is not None
        }

    def stated(self) -> dict[str, Any]:
        return {"name": self.name, "email": self.email, "principal": self.principal}


def _domains(control_ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(str(c).split("-")[0] for c in control_ids if c))


class OwnerProposer:
    """The roster and the documents' owners of one assessment, read once per draft."""

    def __init__(self, people: Sequence[Someone], document_owners: dict[str, str]) -> None:
        self.people = list(people)
        self.document_owners = document_owners

    @classmethod
    def load(cls, session: Session, assessment_id: uuid.UUID) -> OwnerProposer:
        rows = session.scalars(
            select(RosterPerson)
            .where(RosterPerson.assessment_id == assessment_id)
            .order_by(RosterPerson.added_at, RosterPerson.id)
        )
        people = [
            Someone(r.name, r.email, r.principal, tuple(r.roles), r.title, tuple(r.domains or []))
            for r in rows
        ]
        owners = session.execute(
            select(Document.filename, Document.owner).where(
                Document.assessment_id == assessment_id,
                Document.life_status == CURRENT,
                Document.owner.is_not(None),
            )
        ).all()
        return cls(people, {str(f): str(o) for f, o in owners if str(o or "").strip()})

    def propose(self, control_ids: Sequence[str], documents: Sequence[str]) -> dict[str, Any]:
        """`proposed_owner` (a name), `proposed_owner_kind` (person or role),
        `proposed_owner_source` (where it came from) and `proposed_owner_person` (name,
        email, principal), for a row of `control_ids` citing `documents`."""
        for document in documents:
            owner = self.document_owners.get(str(document))
            if owner:
                return self._from_document(owner.strip(), str(document))
        domains = _domains(control_ids)
        found = self._by_domain(domains) or self._by_title(domains) or self._by_role(domains)
        if found is not None:
            return found
        return {
            "proposed_owner": proposed_owner(list(control_ids)),
            "proposed_owner_kind": ROLE,
            "proposed_owner_source": fallback(
                "the assessment has no roster and no cited document has an owner; the role "
                f"that usually runs SCF {domains[0] if domains else 'GOV'}"
            ),
            "proposed_owner_person": None,
        }

    def _by_domain(self, domains: list[str]) -> dict[str, Any] | None:
        for domain in domains:
            for person in self.people:
                if domain in person.domains:
                    return _person(person, from_roster(f"owns the SCF {domain} domain"))
        return None

    def _by_title(self, domains: list[str]) -> dict[str, Any] | None:
        for domain in domains:
            role = OWNER_ROLES.get(domain, "").casefold()
            for person in self.people:
                if role and (person.title or "").casefold() == role:
                    return _person(
                        person,
                        from_roster(
                            f"their title is {person.title}, who usually runs SCF {domain}"
                        ),
                    )
        return None

    def _by_role(self, domains: list[str]) -> dict[str, Any] | None:
        for wanted in OWNING_ROLES:
            for person in self.people:
                if wanted in person.roles:
                    return _person(
                        person,
                        from_roster(
                            f"the assessment's {wanted.replace('_', ' ')}; no one on it "
                            f"owns {'/'.join(domains) or 'these controls'}"
                        ),
                    )
        if self.people:
            first = from_roster("first person on it; no one on it owns controls")
            return _person(self.people[0], first)
        return None

    def _from_document(self, owner: str, document: str) -> dict[str, Any]:
        for person in self.people:
            if person.matches(owner):
                return _person(person, from_document(document, on_roster=True))
        return {
            "proposed_owner": owner,
            "proposed_owner_kind": PERSON,
            "proposed_owner_source": from_document(document, on_roster=False),
            "proposed_owner_person": {"name": owner, "email": None, "principal": None},
        }


def _person(person: Someone, source: str) -> dict[str, Any]:
    return {
        "proposed_owner": person.name,
        "proposed_owner_kind": PERSON,
        "proposed_owner_source": source,
        "proposed_owner_person": person.stated(),
    }
