"""An assessment's roster in the console: the people who own, approve and run its
controls, added and removed by a person (each change kept in the roster's history). The
add form carries a key: sent twice, it adds the person once."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Form, Response

from orchestrator.console.form_once import created_once
from orchestrator.console.web import ConsoleRoute, Posted, need, see_other
from orchestrator.service.apikeys import Scope
from orchestrator.service.roster import Person, RosterRole, add_person, remove_person

router = APIRouter(prefix="/console", route_class=ConsoleRoute, include_in_schema=False)


@router.post("/assessments/{assessment_id}/roster", name="console_roster_add")
def add(
    session: Posted,
    assessment_id: uuid.UUID,
    key: Annotated[str, Form(min_length=8, max_length=64)],
    name: Annotated[str, Form(max_length=200)] = "",
    email: Annotated[str, Form(max_length=320)] = "",
    principal: Annotated[str, Form(max_length=256)] = "",
    telephone: Annotated[str, Form(max_length=40)] = "",
    roles: Annotated[list[str] | None, Form(max_length=len(RosterRole))] = None,
    title: Annotated[str, Form(max_length=200)] = "",
    domains: Annotated[str, Form(max_length=400)] = "",
) -> Response:
    need(session, Scope.SIGNAL)
    person = Person(
        name=name,
        email=email or None,
        principal=principal or None,
        telephone=telephone or None,
        roles=roles or [],
        title=title or None,
        domains=[d for d in domains.replace(",", " ").split() if d],
    )
    page = f"/console/assessments/{assessment_id}#roster-heading"

    def add_once() -> str:
        add_person(session.principal.actor, assessment_id, person)
        return page

    fields = {"assessment_id": str(assessment_id), **person.model_dump(mode="json")}
    return see_other(created_once(session.principal, "roster", key, fields, add_once).location)


@router.post("/assessments/{assessment_id}/roster/{person_id}/remove", name="console_roster_remove")
def remove(session: Posted, assessment_id: uuid.UUID, person_id: uuid.UUID) -> Response:
    need(session, Scope.SIGNAL)
    remove_person(session.principal.actor, assessment_id, person_id)
    return see_other(f"/console/assessments/{assessment_id}#roster-heading")
