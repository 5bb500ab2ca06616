"""How a risk of the register is assessed (ISO/IEC 27001 6.1.2) and treated (6.1.3): the
documented default method, stated in the register and in every export of it.

Likelihood and impact are each rated 1-5; the risk is their product (1-25) and its level
is read from the matrix below. The register states this method, so a reader of an export
knows what a "4" means without asking.
"""

from __future__ import annotations

from enum import StrEnum


class TreatmentOption(StrEnum):
    """ISO/IEC 27005's four options: modify the risk with controls, retain it, avoid the
    activity, or share it (insurance, a supplier)."""

    MODIFY = "modify"
    RETAIN = "retain"
    AVOID = "avoid"
    SHARE = "share"


class RiskChange(StrEnum):
    """What a version of a risk records."""

    CREATED = "created"
    UPDATED = "updated"
    ACCEPTED = "accepted"


class ProposalStatus(StrEnum):
    """Where a risk a gap finding proposed stands: a person accepts it (a new risk),
    merges it into a risk held, or rejects it."""

    PROPOSED = "proposed"
    ACCEPTED = "accepted"
    MERGED = "merged"
    REJECTED = "rejected"


METHOD_NAME = "likelihood x impact, 1-5 scales (default)"
SCALE_MIN, SCALE_MAX = 1, 5
LIKELIHOOD_SCALE: dict[int, str] = {
    1: "rare: not expected in the next three years",
    2: "unlikely: could happen once in three years",
    3: "possible: could happen within a year",
    4: "likely: expected within a year",
    5: "almost certain: expected several times a year",
}
IMPACT_SCALE: dict[int, str] = {
    1: "negligible: no lasting effect on information or services",
    2: "minor: limited, quickly recovered",
    3: "moderate: noticeable harm to a service, data or obligations",
    4: "major: serious harm, a breach of a legal or contractual obligation",
    5: "severe: loss of critical services or data, regulatory sanction",
}
#: The lowest score of each level, highest level first: risk = likelihood x impact.
LEVELS: tuple[tuple[int, str], ...] = ((15, "high"), (8, "medium"), (4, "low"), (1, "very low"))


def score(likelihood: int, impact: int) -> int:
    return likelihood * impact


def level(likelihood: int, impact: int) -> str:
    value = score(likelihood, impact)
    return next(name for floor, name in LEVELS if value >= floor)


def method_statement() -> dict[str, object]:
    """The method as data: what the register's views and exports state."""
    return {
        "name": METHOD_NAME,
        "likelihood": {str(k): v for k, v in LIKELIHOOD_SCALE.items()},
        "impact": {str(k): v for k, v in IMPACT_SCALE.items()},
        "score": "likelihood x impact (1-25)",
        "levels": {name: f">= {floor}" for floor, name in LEVELS},
        "treatment_options": [option.value for option in TreatmentOption],
    }


def method_text() -> str:
    """The method in one paragraph, for a CSV's or a sheet's heading."""
    levels = ", ".join(f"{name} >= {floor}" for floor, name in LEVELS)
    return (
        f"Method: {METHOD_NAME}. Likelihood and impact rated {SCALE_MIN}-{SCALE_MAX}; "
        f"risk score = likelihood x impact; levels: {levels}. Treatment: "
        + ", ".join(option.value for option in TreatmentOption)
        + "."
    )
