"""An assessment's roster: the people who own, approve and run its controls.

Each person has a name, an email or a principal id (or both), one or more roles on the
assessment (owner, approver, control owner, ISSO, and FedRAMP's assessment plan roles:
assessment lead, assessor, the CSP's points of contact), and optionally a telephone
number, a job title and the SCF domains whose controls they own. Drafts propose owners
for SoA rows and gap findings from the roster (workers.analysis.owner_proposal); a person
confirms each; the OSCAL assessment plan names them in FedRAMP's roles. Every change is an
append-only `roster_events` row: who added, changed or removed whom, when and why.
"""

from __future__ import annotations

import re
import uuid
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict
from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import StoredTime, utcnow
from orchestrator.contracts.errors import AlreadyOnRoster, InvalidInput, NotFound
from orchestrator.contracts.fedramp_roles import (
    ASSESSMENT_LEAD,
    ASSESSOR,
    CSP_END_OF_TESTING_POC,
    CSP_OPERATIONS_CENTER,
    CSP_POC,
    CSP_RESULTS_POC,
)
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.text import SPACE
from orchestrator.db.busy import retry_busy
from orchestrator.db.roster_models import RosterEvent, RosterPerson
from orchestrator.db.session import read_transaction, transaction
from orchestrator.service.producer import load_assessment


class RosterRole(StrEnum):
    OWNER = "owner"
    APPROVER = "approver"
    CONTROL_OWNER = "control_owner"
    ISSO = "isso"
    # FedRAMP's assessment plan roles (orchestrator.contracts.fedramp_roles maps them).
    ASSESSMENT_LEAD = ASSESSMENT_LEAD
    ASSESSOR = ASSESSOR
    CSP_POC = CSP_POC
    CSP_OPERATIONS_CENTER = CSP_OPERATIONS_CENTER
    CSP_END_OF_TESTING_POC = CSP_END_OF_TESTING_POC
    CSP_RESULTS_POC = CSP_RESULTS_POC


class RosterAction(StrEnum):
    ADDED = "added"
    CHANGED = "changed"
    REMOVED = "removed"


#: What the roster takes, stated once: the HTTP schema says the same (routers.roster).
#: Explicit ranges, not `\s`: JSON Schema's regex (ECMA) and Python's differ on it.
EMAIL_PATTERN = r"^[^@\u0000-\u0020\u007f]+@[^@\u0000-\u0020\u007f]+\.[^@\u0000-\u0020\u007f]+$"
DOMAIN_PATTERN = r"^([A-Za-z]{3})?$"
#: Digits with the usual separators, an optional leading + (E.164 or as dialled), ending
#: in no space (what the service checks, after stripping the value).
_TELEPHONE_NUMBER = r"\+?[0-9][0-9 ().-]{2,37}[0-9().-]"
#: What the HTTP schema states: the number, with the spaces the service strips around it,
#: or nothing but spaces (no number).
TELEPHONE_PATTERN = rf"^[{SPACE}]*(?:{_TELEPHONE_NUMBER})?[{SPACE}]*$"
_EMAIL = re.compile(EMAIL_PATTERN)
_DOMAIN = re.compile(DOMAIN_PATTERN)
_TELEPHONE = re.compile(_TELEPHONE_NUMBER)


class Person(BaseModel):
    """Who a person is on the roster, as given (checked by `checked`)."""

    model_config = ConfigDict(frozen=True)

    name: str
    email: str | None = None
    principal: str | None = None
    telephone: str | None = None
    roles: list[str]
    title: str | None = None
    domains: list[str] = []


class RosterPersonView(Person):
    id: uuid.UUID
    assessment_id: uuid.UUID
    added_by: str
    added_at: StoredTime


class RosterEventView(BaseModel):
    model_config = ConfigDict(frozen=True, from_attributes=True)

    id: int
    person_id: uuid.UUID
    action: RosterAction
    actor_id: str
    reason: str | None
    person: dict[str, Any]
    created_at: StoredTime


def checked(person: Person) -> Person:
    """The person with blanks dropped and case settled, or a clear refusal."""
    name = person.name.strip()
    if not name or len(name) > 200:
        raise InvalidInput("a person on the roster has a name of 1 to 200 characters")
    if person.email is not None and not _EMAIL.fullmatch(person.email):
        raise InvalidInput(f"{person.email!r} is not an email address")
    email = person.email.lower() if person.email is not None else None
    principal = (person.principal or "").strip() or None
    if email is None and principal is None:
        raise InvalidInput(f"{name} needs an email or a principal id on the roster")
    if email is not None and len(email) > 320:
        raise InvalidInput("an email address has at most 320 characters")
    if principal is not None and len(principal) > 256:
        raise InvalidInput("a principal id has at most 256 characters")
    telephone = (person.telephone or "").strip() or None
    if telephone is not None and not _TELEPHONE.fullmatch(telephone):
        raise InvalidInput(f"{telephone!r} is not a telephone number (digits, + ( ) - . space)")
    roles = list(dict.fromkeys(r.strip().lower() for r in person.roles if r.strip()))
    unknown = sorted(set(roles) - set(RosterRole))
    if not roles or unknown:
        raise InvalidInput(
            f"roles must be one or more of {', '.join(RosterRole)}"
            + (f"; not {', '.join(unknown)}" if unknown else "")
        )
    title = (person.title or "").strip() or None
    if title is not None and len(title) > 200:
        raise InvalidInput("a job title has at most 200 characters")
    wrong = [d for d in person.domains if not _DOMAIN.fullmatch(d)]
    if wrong:
        raise InvalidInput(
            f"SCF domains are three-letter codes such as IAC or HRS; not {', '.join(wrong)}"
        )
    domains = list(dict.fromkeys(d.upper() for d in person.domains if d))
    return Person(
        name=name,
        email=email,
        principal=principal,
        telephone=telephone,
        roles=roles,
        title=title,
        domains=domains,
    )


def _view(row: RosterPerson) -> RosterPersonView:
    return RosterPersonView(
        id=row.id,
        assessment_id=row.assessment_id,
        name=row.name,
        email=row.email,
        principal=row.principal,
        telephone=row.telephone,
        roles=list(row.roles),
        title=row.title,
        domains=list(row.domains),
        added_by=row.added_by,
        added_at=row.added_at,
    )


def _people(session: Session, assessment_id: uuid.UUID) -> list[RosterPerson]:
    return list(
        session.scalars(
            select(RosterPerson)
            .where(RosterPerson.assessment_id == assessment_id)
            .order_by(RosterPerson.added_at, RosterPerson.id)
        )
    )


def _same_person(row: RosterPerson, person: Person) -> bool:
    return bool(
        (person.email and row.email == person.email)
        or (person.principal and row.principal == person.principal)
    )


def _record(
    session: Session,
    actor: Actor,
    row: RosterPerson,
    action: RosterAction,
    reason: str | None,
) -> None:
    session.add(
        RosterEvent(
            tenant_id=row.tenant_id,
            assessment_id=row.assessment_id,
            person_id=row.id,
            action=action.value,
            actor_id=actor.actor_id[:256],
            reason=reason,
            person=Person.model_validate(row, from_attributes=True).model_dump(),
            created_at=utcnow(),
        )
    )


@retry_busy
def add_person(
    actor: Actor, assessment_id: uuid.UUID, person: Person, *, reason: str | None = None
) -> RosterPersonView:
    """Put a person on the roster; one already there (same email or principal) is refused."""
    person = checked(person)
    with transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        for row in _people(session, assessment_id):
            if _same_person(row, person):
                raise AlreadyOnRoster(
                    f"{row.name} is already on the roster with that email or principal: "
                    "change their entry instead"
                )
        row = RosterPerson(
            id=new_id(),
            tenant_id=assessment.tenant_id,
            assessment_id=assessment_id,
            **person.model_dump(),
            added_by=actor.actor_id[:256],
            added_at=utcnow(),
        )
        session.add(row)
        session.flush()
        _record(session, actor, row, RosterAction.ADDED, reason)
        return _view(row)


def _load_person(
    session: Session, actor: Actor, assessment_id: uuid.UUID, person_id: uuid.UUID
) -> RosterPerson:
    load_assessment(session, actor, assessment_id)
    row = session.get(RosterPerson, person_id)
    if row is None or row.assessment_id != assessment_id:
        raise NotFound(f"assessment {assessment_id} has no person {person_id} on its roster")
    return row


@retry_busy
def change_person(
    actor: Actor,
    assessment_id: uuid.UUID,
    person_id: uuid.UUID,
    person: Person,
    *,
    reason: str | None = None,
) -> RosterPersonView:
    """Replace a person's entry (name, contact, roles, title, domains)."""
    person = checked(person)
    with transaction() as session:
        row = _load_person(session, actor, assessment_id, person_id)
        for other in _people(session, assessment_id):
            if other.id != row.id and _same_person(other, person):
                raise AlreadyOnRoster(f"{other.name} is already on the roster with that contact")
        for key, value in person.model_dump().items():
            setattr(row, key, value)
        session.flush()
        _record(session, actor, row, RosterAction.CHANGED, reason)
        return _view(row)


@retry_busy
def remove_person(
    actor: Actor, assessment_id: uuid.UUID, person_id: uuid.UUID, *, reason: str | None = None
) -> None:
    """Take a person off the roster; what they were stays in the roster's history."""
    with transaction() as session:
        row = _load_person(session, actor, assessment_id, person_id)
        _record(session, actor, row, RosterAction.REMOVED, reason)
        session.delete(row)


@retry_busy
def roster(actor: Actor, assessment_id: uuid.UUID) -> list[RosterPersonView]:
    """The people on the assessment's roster, in the order they were added."""
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        return [_view(row) for row in _people(session, assessment_id)]


@retry_busy
def roster_person(actor: Actor, assessment_id: uuid.UUID, person_id: uuid.UUID) -> RosterPersonView:
    with read_transaction() as session:
        return _view(_load_person(session, actor, assessment_id, person_id))


@retry_busy
def roster_history(actor: Actor, assessment_id: uuid.UUID) -> list[RosterEventView]:
    """Every change to the roster, oldest first."""
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        events = session.scalars(
            select(RosterEvent)
            .where(RosterEvent.assessment_id == assessment_id)
            .order_by(RosterEvent.id)
        )
        return [RosterEventView.model_validate(e) for e in events]
