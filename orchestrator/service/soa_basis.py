"""What each Statement of Applicability row rests on (ISO/IEC 27001 6.1.3 (d)): the
treated risks of the register that select its control, a legal, regulatory or contractual
requirement a person stated (`legal_basis`), or, for an excluded row, the exclusion's
reason. A row with none of these has no basis: the SoA gate's readiness names it.

A risk selects a row when the controls chosen to treat it include one of the row's SCF
controls, or its requirements name the row's framework requirement.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.contracts import risk_method
from orchestrator.db.risk_models import Risk, RiskVersion
from orchestrator.service.draft_rows import names_of

#: The basis kinds a row's `basis` names.
RISK_TREATMENT, LEGAL, EXCLUSION = "risk_treatment", "legal_or_contractual", "exclusion"
SELECTED_BY = "Selected by the treatment of:"
REQUIRED_BY = "Required by:"


@dataclass(frozen=True)
class HeldRisk:
    """A risk of the register at its newest version, as an SoA row cites it."""

    risk_id: str
    title: str
    treatment: str
    likelihood: int
    impact: int
    controls: frozenset[str]
    requirements: frozenset[tuple[str, str]]
    accepted_by: str | None

    def cited(self) -> dict[str, Any]:
        return {
            "risk_id": self.risk_id,
            "title": self.title,
            "treatment": self.treatment,
            "level": risk_method.level(self.likelihood, self.impact),
            "accepted_by": self.accepted_by,
        }


def held_risks(session: Session, tenant_id: str, organization_id: str) -> list[HeldRisk]:
    """The organisation's register at each risk's newest version, oldest risk first."""
    rows = session.execute(
        select(Risk.id, RiskVersion)
        .join(
            RiskVersion,
            (RiskVersion.risk_id == Risk.id) & (RiskVersion.version == Risk.version),
        )
        .where(Risk.tenant_id == tenant_id, Risk.organization_id == organization_id)
        .order_by(Risk.created_at, Risk.id)
    ).all()
    return [
        HeldRisk(
            risk_id=str(risk_id),
            title=v.title,
            treatment=v.treatment,
            likelihood=v.likelihood,
            impact=v.impact,
            controls=frozenset(v.controls),
            requirements=frozenset(
                (str(r.get("framework")), str(r.get("requirement_id"))) for r in v.requirements
            ),
            accepted_by=v.accepted_by,
        )
        for risk_id, v in rows
    ]


def basis_of(row: dict[str, Any], risks: list[HeldRisk]) -> dict[str, Any] | None:
    """The row's basis, or None when it has none."""
    if row.get("applicable", True) is False:
        reason = str(row.get("justification") or "").strip()
        return {"kind": EXCLUSION, "reason": reason} if reason else None
    controls = set(row.get("scf_controls") or [])
    requirement = (str(row.get("framework")), str(row.get("requirement_id")))
    selecting = [
        r.cited()
        for r in risks
        if r.treatment != risk_method.TreatmentOption.RETAIN.value
        and (controls & r.controls or requirement in r.requirements)
    ]
    if selecting:
        return {"kind": RISK_TREATMENT, "risks": selecting}
    legal = str(row.get("legal_basis") or "").strip()
    return {"kind": LEGAL, "requirement": legal} if legal else None


def with_basis(rows: list[dict[str, Any]], risks: list[HeldRisk]) -> list[dict[str, Any]]:
    """Each row with its `basis` (None: no basis)."""
    return [row | {"basis": basis_of(row, risks)} for row in rows if isinstance(row, dict)]


def no_basis(content: dict[str, Any], risks: list[HeldRisk]) -> list[str]:
    """The names (as amendments name them) of the SoA's rows with no basis."""
    rows = [r for r in content.get("requirements", []) if isinstance(r, dict)]
    return [
        name
        for name, row in zip(names_of(rows, "requirement_id"), rows, strict=True)
        if basis_of(row, risks) is None
    ]


def risks_named(cited: list[dict[str, Any]], accepted: bool = False) -> str:
    """The treated risks a row cites, in words: "Stolen laptop (high, modify)"; with
    `accepted`, who accepted each one's residual risk too."""

    def named(risk: dict[str, Any]) -> str:
        said = [str(risk.get("level")), str(risk.get("treatment"))]
        if accepted and risk.get("accepted_by"):
            said.append(f"residual risk accepted by {risk['accepted_by']}")
        return f"{risk.get('title')} ({', '.join(said)})"

    return "; ".join(named(risk) for risk in cited)


def justification_with_basis(row: dict[str, Any]) -> str:
    """The row's justification, followed by the treated risks or the requirement it rests
    on (an exclusion's justification is its reason already); said once, however often
    the row is drafted again with a justification carried."""
    text = str(row.get("justification") or "").strip()
    basis = row.get("basis")
    said = ""
    if basis and basis["kind"] == RISK_TREATMENT:
        said = f"{SELECTED_BY} {risks_named(basis['risks'])}."
    elif basis and basis["kind"] == LEGAL:
        said = f"{REQUIRED_BY} {basis['requirement']}."
    if not said or said in text:
        return text
    return f"{text} {said}".strip()
