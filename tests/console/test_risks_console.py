"""The risk register in the console: linked from the assessment's page, the method stated,
each risk at its newest version with who accepted it; the text escaped, the register the
organisation's, another tenant's hidden; the risks gap findings proposed, decided on it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from orchestrator.contracts.risk_method import METHOD_NAME, TreatmentOption
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.service.producer import Actor, create_assessment, start_lifecycle
from orchestrator.service.risk_proposals import risk_proposals, store_proposals
from orchestrator.service.risks import RiskContent, accept_risk, create_risk
from tests.console.kit import Browser, key, text
from workers.analysis.risk_proposal import propose_risk

OWNER = Actor(tenant_id="acme", actor_id="user:ana@acme")
CISO = Actor(tenant_id="acme", actor_id="user:ciso@acme")


def test_the_register_page_lists_the_organisations_risks(client: TestClient) -> None:
    first = create_assessment(OWNER, "acme-org", "FY27")
    later = create_assessment(OWNER, "acme-org", "FY28")
    other = create_assessment(OWNER, "other-org", "Elsewhere")
    content = RiskContent(
        title="Stolen laptop <script>",
        asset="Staff laptops",
        threat="Theft",
        vulnerability="No disk encryption",
        likelihood=5,
        impact=4,
        owner="user:it@acme",
        treatment=TreatmentOption.MODIFY,
        controls=["CRY-05"],
    )
    risk = create_risk(OWNER, first.id, content)
    accept_risk(CISO, risk.risk_id, first.id, note="within appetite")

    browser = Browser(client)
    assert browser.sign_in(key("read")).status_code == 303
    page_url = f"/console/assessments/{later.id}/risks"
    assert page_url in browser.get(f"/console/assessments/{later.id}").text
    page = browser.get(page_url)
    assert page.status_code == 200
    shown = text(page)
    assert METHOD_NAME in shown and "high >= 15" in shown
    assert "5 x 4 = 20 high" in shown and "SCF CRY-05" in shown
    assert "by user:ciso@acme" in shown and "v2" in shown
    assert "Stolen laptop <script>" in shown and "<script>" not in page.text
    assert "No risks recorded" in text(browser.get(f"/console/assessments/{other.id}/risks"))

    stranger = Browser(client)
    assert stranger.sign_in(key("read", tenant="elsewhere")).status_code == 303
    assert stranger.get(page_url).status_code == 404


def test_proposals_are_listed_with_their_reason_and_decided_on_the_page(
    client: TestClient,
) -> None:
    """The proposals the gap analysis stored for two ISO/IEC 27001 findings: one accepted
    with the controls kept and an owner, the other rejected with a reason; the page then
    shows each decision, and a reader has no forms."""
    assessment = create_assessment(OWNER, "acme-org", "FY27")
    receipt = start_lifecycle(OWNER, assessment.id, "risk-proposals-page", kick=lambda _: None)
    gaps = [
        {
            "control_id": f"ISO/IEC 27001:2022 {rid}",
            "framework": "ISO/IEC 27001:2022",
            "requirement_id": rid,
            "title": title,
            "scf_controls": controls,
            "weighting": 8,
            "evidence_state": "no_evidence_found",
            "severity": "high",
            "condition": f"No document addresses {title} <b>.",
            "effect": "Customer data could be read by people who should not.",
            "recommendation": "Write the policy.",
        }
        for rid, title, controls in (
            ("A.8.24", "Use of cryptography", ["CRY-01", "CRY-05"]),
            ("A.8.13", "Information backup", ["BCD-11"]),
        )
    ]
    with transaction() as session:
        run = session.get(WorkflowRun, receipt.id)
        assert run is not None
        store_proposals(session, run, 1, [g | {"risk_proposal": propose_risk(g)} for g in gaps])

    browser = Browser(client)
    assert browser.sign_in(key("read", "signal")).status_code == 303
    page_url = f"/console/assessments/{assessment.id}/risks"
    shown = text(browser.get(page_url))
    assert "ISO/IEC 27001:2022 A.8.24" in shown and "No document addresses Use of" in shown
    assert "<b>" not in browser.get(page_url).text.split("proposals-heading")[1]
    found = {p.finding: p for p in risk_proposals(OWNER, assessment.id)}
    crypto = found["ISO/IEC 27001:2022 A.8.24"].proposal_id
    backup = found["ISO/IEC 27001:2022 A.8.13"].proposal_id

    accepted = browser.post(
        f"/console/risk-proposals/{crypto}/accept",
        {"owner": "user:it@acme", "controls": "CRY-05"},
        from_page=page_url,
    )
    assert accepted.status_code == 303, accepted.text
    assert accepted.headers["location"].startswith(page_url)
    rejected = browser.post(
        f"/console/risk-proposals/{backup}/reject",
        {"reason": "the hosting contract covers backups"},
        from_page=page_url,
    )
    assert rejected.status_code == 303, rejected.text
    again = browser.post(
        f"/console/risk-proposals/{backup}/reject", {"reason": "again"}, from_page=page_url
    )
    assert again.status_code == 409
    shown = text(browser.get(accepted.headers["location"]))
    assert "Accepted: ISO/IEC 27001:2022 A.8.24" in shown
    assert "accepted by user:ana@acme" in shown and "SCF CRY-05" in shown
    assert "rejected by user:ana@acme" in shown and "the hosting contract covers" in shown

    reader = Browser(client)
    assert reader.sign_in(key("read", principal="user:reader@acme")).status_code == 303
    assert "/accept" not in reader.get(page_url).text
