"""FedRAMP's assessment plan roles (its SAP rules, `sap.sch` §4.11-4.21) and the roster
roles that feed each, declared here alone: the plan's metadata names a roster person in
every FedRAMP role one of their roster roles feeds.

A FedRAMP role nobody on the roster fills is left out of the plan: no invented person.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FedrampRole:
    id: str
    """The role id FedRAMP's rules look for."""
    title: str
    fed_by: tuple[str, ...]
    """The roster roles (orchestrator.service.roster.RosterRole) whose people fill it."""


ASSESSMENT_LEAD = "assessment_lead"
ASSESSOR = "assessor"
CSP_POC = "csp_poc"
CSP_OPERATIONS_CENTER = "csp_operations_center"
CSP_END_OF_TESTING_POC = "csp_end_of_testing_poc"
CSP_RESULTS_POC = "csp_results_poc"

FEDRAMP_ROLES = (
    FedrampRole("assessment-team", "Assessment team", (ASSESSMENT_LEAD, ASSESSOR)),
    FedrampRole("assessment-lead", "Assessment lead", (ASSESSMENT_LEAD,)),
    # FedRAMP wants at least three points of contact, one of them the operations center.
    FedrampRole(
        "csp-assessment-poc",
        "CSP points of contact for the assessment",
        (CSP_POC, CSP_OPERATIONS_CENTER),
    ),
    FedrampRole("csp-operations-center", "CSP operations center", (CSP_OPERATIONS_CENTER,)),
    FedrampRole(
        "csp-end-of-testing-poc",
        "CSP point of contact for the end of testing",
        (CSP_END_OF_TESTING_POC,),
    ),
    FedrampRole("csp-results-poc", "CSP point of contact for the test results", (CSP_RESULTS_POC,)),
)
"""Each FedRAMP role of the plan, with the roster roles that feed it."""

ROSTER_ROLES = tuple(dict.fromkeys(r for role in FEDRAMP_ROLES for r in role.fed_by))
"""The roster roles that exist for FedRAMP's plan."""


def fedramp_roles_of(roster_roles: tuple[str, ...] | list[str]) -> list[FedrampRole]:
    """The FedRAMP roles a person with these roster roles fills."""
    return [role for role in FEDRAMP_ROLES if set(role.fed_by) & set(roster_roles)]
