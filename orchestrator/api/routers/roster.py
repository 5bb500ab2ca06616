"""An assessment's roster over HTTP: the people who own, approve and run its controls.

Drafts propose owners from it; every change is kept (`GET .../roster-history`)."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Path, Response
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.api.auth import Reader, Signaller
from orchestrator.api.model_rules import at_least_one_of
from orchestrator.api.paths import AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import NOT_BLANK, Text
from orchestrator.service import roster
from orchestrator.service.roster import (
    DOMAIN_PATTERN,
    EMAIL_PATTERN,
    TELEPHONE_PATTERN,
    Person,
    RosterEventView,
    RosterPersonView,
    RosterRole,
)

router = APIRouter(
    prefix="/api/v1",
    tags=["roster"],
    responses=problem_responses(400, 401, 403, 404, 422),
)

PersonId = Annotated[uuid.UUID, Path(alias="personId")]


class PersonRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra=at_least_one_of("email", "principal", text=True)
    )

    name: Text = Field(min_length=1, max_length=200, pattern=NOT_BLANK, examples=["Dana Whitfield"])
    email: Text | None = Field(
        None,
        max_length=320,
        description="An email or a principal id",
        # Checked by the roster service (Python's re), stated here.
        json_schema_extra={"pattern": EMAIL_PATTERN},
    )
    principal: Text | None = Field(
        None, max_length=256, description="The principal an API key or a console login names"
    )
    telephone: Text | None = Field(
        None,
        max_length=40,
        description="Where to call them (FedRAMP's assessment plan asks for the lead's)",
        # Checked by the roster service, stated here.
        json_schema_extra={"pattern": TELEPHONE_PATTERN},
    )
    roles: list[RosterRole] = Field(min_length=1, max_length=len(RosterRole))
    title: Text | None = Field(
        None, max_length=200, description="Job title, matched against the role a domain needs"
    )
    domains: list[
        Annotated[Text, Field(max_length=8, json_schema_extra={"pattern": DOMAIN_PATTERN})]
    ] = Field(
        default_factory=list,
        max_length=40,
        description="SCF domains whose controls they own (IAC, HRS, ...)",
    )
    reason: Text | None = Field(None, max_length=2000, description="Kept in the history.")

    def person(self) -> Person:
        return Person.model_validate(self.model_dump(exclude={"reason"}))


@router.get(
    "/assessments/{assessmentId}/roster",
    response_model=list[RosterPersonView],
    summary="The assessment's roster",
)
def people(assessment_id: AssessmentId, principal: Reader) -> list[RosterPersonView]:
    return roster.roster(principal.actor, assessment_id)


@router.post(
    "/assessments/{assessmentId}/roster",
    status_code=201,
    response_model=RosterPersonView,
    summary="Put a person on the roster",
    description="A person has a name, an email or a principal id, one or more roles "
    "(owner, approver, control_owner, isso; for FedRAMP's assessment plan assessment_lead, "
    "assessor, csp_poc, csp_operations_center, csp_end_of_testing_poc, csp_results_poc) "
    "and optionally a telephone number, a job title and the SCF domains they own. One "
    "already on the roster (same email or principal) is refused.",
)
def add(assessment_id: AssessmentId, body: PersonRequest, principal: Signaller) -> RosterPersonView:
    return roster.add_person(principal.actor, assessment_id, body.person(), reason=body.reason)


@router.get(
    "/assessments/{assessmentId}/roster-history",
    response_model=list[RosterEventView],
    summary="Every change to the roster, oldest first",
)
def history(assessment_id: AssessmentId, principal: Reader) -> list[RosterEventView]:
    return roster.roster_history(principal.actor, assessment_id)


@router.get(
    "/assessments/{assessmentId}/roster/{personId}",
    response_model=RosterPersonView,
    summary="One person on the roster",
)
def person(assessment_id: AssessmentId, person_id: PersonId, principal: Reader) -> RosterPersonView:
    return roster.roster_person(principal.actor, assessment_id, person_id)


@router.put(
    "/assessments/{assessmentId}/roster/{personId}",
    response_model=RosterPersonView,
    summary="Change a person's entry on the roster",
)
def change(
    assessment_id: AssessmentId, person_id: PersonId, body: PersonRequest, principal: Signaller
) -> RosterPersonView:
    return roster.change_person(
        principal.actor, assessment_id, person_id, body.person(), reason=body.reason
    )


@router.delete(
    "/assessments/{assessmentId}/roster/{personId}",
    status_code=204,
    response_class=Response,
    summary="Take a person off the roster",
)
def remove(assessment_id: AssessmentId, person_id: PersonId, principal: Signaller) -> Response:
    roster.remove_person(principal.actor, assessment_id, person_id)
    return Response(status_code=204)
