"""How far the drafts' evidence proposals can be trusted: shipped figures and the tenant's own.

A proposal is a claim, measured like a classifier. The shipped figures come from
`bench.evidence_retrieval` on the labelled corpora (`proposal_quality.json` beside this
module, with the model and catalogue they were measured with). The tenant's own figures
come from its reviewers: every SoA row on which a person set the assessed status is a
label for the proposal the draft made on it. "Implemented" or "partially implemented"
says evidence exists; "not implemented" says it does not; "not applicable" says nothing
about evidence. Precision of `evidence_found` is the share of rows proposed found that
a person judged implemented (fully or partly); kappa compares found/none with the
person's yes/no beyond chance (weak and template proposals are abstentions).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact, Assessment
from orchestrator.db.session import read_transaction

SHIPPED = Path(__file__).with_name("proposal_quality.json")
#: Fewer decided rows than this say too little to warn about.
ENOUGH = 20
_YES = {"implemented", "partially_implemented"}
_NO = {"not_implemented"}
FOUND, NONE = "evidence_found", "no_evidence_found"


@dataclass(frozen=True)
class Figures:
    """One framework's proposals against what people decided."""

    framework: str
    decided: int  # rows with a proposal whose status a person set (not "not applicable")
    found: int  # of which proposed evidence_found
    found_confirmed: int  # ... that the person judged implemented, fully or partly
    abstained: int  # weak evidence or template: no claim either way
    precision_found: float | None
    kappa: float | None


@dataclass(frozen=True)
class QualityView:
    shipped: dict[str, Any]
    tenant: list[Figures]
    warnings: list[str] = field(default_factory=list)


@lru_cache(maxsize=1)
def shipped_figures() -> dict[str, Any]:
    """The figures measured on the labelled corpora, as the bench wrote them."""
    loaded: dict[str, Any] = json.loads(SHIPPED.read_text())
    return loaded


def labels(content: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(framework, proposal, decided status) for each decided SoA row with a proposal."""
    out = []
    for row in content.get("requirements", []):
        proposal, decided = row.get("proposal"), row.get("implementation_status")
        if proposal and decided in _YES | _NO:
            out.append((str(row.get("framework")), str(proposal), str(decided)))
    return out


def figures(framework: str, rows: Iterable[tuple[str, str]]) -> Figures:
    """Figures of (proposal, decided status) pairs."""
    pairs = list(rows)
    found = [d for p, d in pairs if p == FOUND]
    confirmed = sum(1 for d in found if d in _YES)
    claims = [(p == FOUND, d in _YES) for p, d in pairs if p in (FOUND, NONE)]
    return Figures(
        framework=framework,
        decided=len(pairs),
        found=len(found),
        found_confirmed=confirmed,
        abstained=len(pairs) - len(claims),
        precision_found=confirmed / len(found) if found else None,
        kappa=cohen_kappa(claims) if claims else None,
    )


def cohen_kappa(pairs: list[tuple[bool, bool]]) -> float:
    """Cohen's kappa of two yes/no raters (the draft, a person) over the same rows."""
    total = len(pairs)
    agree = sum(a == b for a, b in pairs) / total
    first = sum(a for a, _ in pairs) / total
    second = sum(b for _, b in pairs) / total
    chance = first * second + (1 - first) * (1 - second)
    return (agree - chance) / (1 - chance) if chance < 1 else 1.0


@retry_busy
def tenant_quality(actor: Actor) -> QualityView:
    """The shipped figures, the tenant's per framework (each run's latest SoA), and a
    warning where the tenant's fall below the shipped ones on enough decided rows."""
    latest = (
        select(Artifact.run_id, func.max(Artifact.version).label("version"))
        .where(Artifact.tenant_id == actor.tenant_id, Artifact.kind == ArtifactKind.SOA.value)
        .group_by(Artifact.run_id)
        .subquery()
    )
    with read_transaction() as session:
        rows = session.execute(
            select(Artifact.content, Assessment.organization_id)
            .join(
                latest,
                (Artifact.run_id == latest.c.run_id) & (Artifact.version == latest.c.version),
            )
            .join(Assessment, Assessment.id == Artifact.assessment_id)
            .where(Artifact.kind == ArtifactKind.SOA.value)
        ).all()
    by_framework: dict[str, list[tuple[str, str]]] = {}
    for content, organization in rows:
        if not actor.sees(organization):
            continue
        for framework, proposal, decided in labels(content):
            by_framework.setdefault(framework, []).append((proposal, decided))
    tenant = [figures(name, pairs) for name, pairs in sorted(by_framework.items())]
    shipped = shipped_figures()
    return QualityView(shipped, tenant, quality_warnings(tenant, shipped))


def quality_warnings(tenant: list[Figures], shipped: dict[str, Any]) -> list[str]:
    measured = shipped.get("corpora", [])
    if not measured:
        return []
    floor_precision = min(float(c["precision_found"]) for c in measured)
    floor_kappa = min(float(c["kappa"]) for c in measured)
    out = []
    for own in tenant:
        if own.decided < ENOUGH:
            continue
        if own.precision_found is not None and own.precision_found < floor_precision:
            out.append(
                f"{own.framework}: of {own.found} rows proposed evidence_found, reviewers "
                f"judged {own.found_confirmed} implemented ({own.precision_found:.2f}), below "
                f"the {floor_precision:.2f} measured on the labelled corpora: read the "
                "proposals' citations before relying on them"
            )
        if own.kappa is not None and own.kappa < floor_kappa:
            out.append(
                f"{own.framework}: proposals and reviewers agree beyond chance at kappa "
                f"{own.kappa:.2f} on {own.decided - own.abstained} rows, below the "
                f"{floor_kappa:.2f} measured on the labelled corpora"
            )
    return out
