"""Proposal quality: every status a reviewer sets on a proposed SoA row is a label; the
tenant's precision of "evidence found" and kappa come from them and move when a reviewer
decides otherwise; the console and `lifecycle quality` show them beside the shipped
figures, with a warning where the tenant's fall below."""

from __future__ import annotations

import json
import uuid
from typing import Any

from click.testing import CliRunner
from fastapi.testclient import TestClient

from orchestrator.cli.group import lifecycle
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact
from orchestrator.db.session import transaction
from orchestrator.service.amendments import amended_content
from orchestrator.service.producer import Actor, create_assessment, start_lifecycle
from orchestrator.service.proposal_quality import (
    ENOUGH,
    cohen_kappa,
    figures,
    labels,
    shipped_figures,
    tenant_quality,
)
from tests.console.kit import Browser, key, text

ACME = Actor(tenant_id="acme", actor_id="user:ana@acme")


def _soa(found: int, none: int, weak: int = 0) -> dict[str, Any]:
    proposals = ["evidence_found"] * found + ["no_evidence_found"] * none + ["weak_evidence"] * weak
    return {
        "requirements": [
            {
                "framework": "SOC 2",
                "requirement_id": f"CC{i}",
                "scf_controls": ["IAC-01"],
                "applicable": True,
                "proposal": proposal,
                "proposed_implementation_status": "implemented",
                "implementation_status": None,
                "owner": None,
            }
            for i, proposal in enumerate(proposals)
        ]
    }


def _decide(content: dict[str, Any], decisions: dict[str, str], based_on: int) -> dict[str, Any]:
    """The next version as the amendment service writes it: a reviewer's decisions."""
    entries = [
        {"row": row, "changes": {"implementation_status": status}}
        for row, status in decisions.items()
    ]
    return amended_content(
        content,
        ArtifactKind.SOA,
        entries,
        actor_id="user:ben@acme",
        reason="read the citations",
        based_on=based_on,
    )


def _store(
    run_id: uuid.UUID, assessment_id: uuid.UUID, version: int, content: dict[str, Any]
) -> None:
    with transaction() as session:
        session.add(
            Artifact(
                tenant_id="acme",
                assessment_id=assessment_id,
                run_id=run_id,
                kind=ArtifactKind.SOA.value,
                version=version,
                status="draft",
                content=content,
                sha256="0" * 64,
                created_by_job_id="test",
                created_at=utcnow(),
            )
        )


def test_labels_are_decided_rows_with_a_proposal_and_figures_follow_them() -> None:
    content = _soa(found=3, none=2, weak=1)
    rows = content["requirements"]
    for row, status in zip(
        rows,
        [
            "implemented",
            "not_implemented",
            "partially_implemented",
            "not_implemented",
            None,
            "implemented",
        ],
        strict=True,
    ):
        row["implementation_status"] = status
    found = labels(content)
    assert len(found) == 5  # the undecided row is no label
    own = figures("SOC 2", [(p, d) for _, p, d in found])
    assert (own.decided, own.found, own.found_confirmed, own.abstained) == (5, 3, 2, 1)
    assert own.precision_found == 2 / 3
    assert own.kappa == cohen_kappa([(True, True), (True, False), (True, True), (False, False)])


def test_cohen_kappa_is_one_on_agreement_and_zero_at_chance() -> None:
    assert cohen_kappa([(True, True), (False, False)] * 5) == 1.0
    assert cohen_kappa([(True, True), (True, False), (False, True), (False, False)]) == 0.0


def test_the_shipped_figures_name_their_model_catalogue_and_both_corpora() -> None:
    shipped = shipped_figures()
    assert shipped["model"] and shipped["catalog"].startswith("SCF")
    corpora = {c["corpus"]: c for c in shipped["corpora"]}
    assert set(corpora) == {"soc2", "iso27001"}
    for figures_ in corpora.values():
        for name in ("precision_found", "recall_found", "kappa", "recall_at_10", "bm25_at_10"):
            assert 0 <= figures_[name] <= 1 or name == "kappa", (name, figures_)


def test_a_reviewers_decision_moves_the_tenants_figures_on_the_page_and_the_cli(
    client: TestClient,
) -> None:
    assessment = create_assessment(ACME, "acme-org", "FY26")
    run = start_lifecycle(ACME, assessment.id, "start-1", kick=lambda _run: None)
    first = _soa(found=ENOUGH, none=10)
    _store(run.id, assessment.id, 1, first)
    assert tenant_quality(ACME).tenant == []  # proposals alone are no labels

    confirmed = {f"CC{i}": "implemented" for i in range(ENOUGH)}
    confirmed |= {f"CC{i}": "not_implemented" for i in range(ENOUGH, ENOUGH + 10)}
    second = _decide(first, confirmed, based_on=1)
    _store(run.id, assessment.id, 2, second)
    (own,) = tenant_quality(ACME).tenant
    assert (own.decided, own.found_confirmed, own.precision_found, own.kappa) == (
        ENOUGH + 10,
        ENOUGH,
        1.0,
        1.0,
    )
    assert tenant_quality(ACME).warnings == []

    # A reviewer reads the citations again and finds half the "found" rows unsupported.
    half = {f"CC{i}": "not_implemented" for i in range(ENOUGH // 2)}
    _store(run.id, assessment.id, 3, _decide(second, half, based_on=2))
    view = tenant_quality(ACME)
    (own,) = view.tenant
    assert own.precision_found == 0.5 and own.kappa is not None and own.kappa < 1.0
    assert any("SOC 2: of 20 rows proposed evidence_found" in w for w in view.warnings)

    browser = Browser(client)
    browser.sign_in(key("read", tenant="acme"))
    page = browser.get("/console/quality")
    assert page.status_code == 200
    shown = text(page)
    assert "SOC 2 30 20 10 0 0.50" in shown and "below the" in shown
    assert "ISO/IEC 27001:2022" in shown  # the shipped figures, both corpora

    result = CliRunner().invoke(lifecycle, ["quality", "--tenant", "acme", "--json"])
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)
    assert printed["tenant"][0]["precision_found"] == 0.5 and printed["warnings"]
    # Another tenant's decisions are not this one's labels.
    assert tenant_quality(Actor(tenant_id="other", actor_id="user:x")).tenant == []
