"""The analysis steps: each artifact is derived from the KB and the artifacts before it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.catalog.categories import categories_of, category_of
from orchestrator.catalog.headings import headings
from orchestrator.catalog.matching import resolve
from orchestrator.catalog.model import LoadedCatalog
from orchestrator.catalog.registry import shipped_catalog
from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Artifact, DocumentChunk
from orchestrator.jobs.interface import JobFailure
from orchestrator.service.amendments import amended_content
from tests.support.services import (
    FIXED_NOW,
    VULNERABILITY_STANDARD,
    Kit,
    add_standard_documents,
    open_kit,
)
from workers.analysis.maturity import level_for
from workers.analysis.proposal import Proposal
from workers.analysis.service import run_analysis_step

K = ArtifactKind


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path) as kit:
            add_standard_documents(kit)
            yield kit
    finally:
        set_clock(None)


def _by_id(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["control_id"]: row for row in rows}


def _linked(catalog: LoadedCatalog, framework: str) -> set[str]:
    """The controls a framework's requirements link, less those of group headings and of
    categories not chosen (SOC 2 without a choice: Security alone)."""
    choice = resolve([catalog], framework)
    assert choice is not None
    requirements = choice.framework.requirements
    left_out = headings(r.id for r in requirements)
    offered = categories_of(choice.framework)
    return {
        c
        for r in requirements
        if r.id not in left_out
        and (not offered or getattr(category_of(offered, r.id), "always", False))
        for c in r.control_ids
    }


def test_the_shipped_catalogue_is_the_official_scf_workbook() -> None:
    catalog = shipped_catalog()
    assert (catalog.info.name, catalog.info.version) == (
        "Secure Controls Framework (SCF)",
        "2022.3",
    )
    assert len(catalog.controls) == 1090 and len(catalog.domains) == 32
    assert all(c.id.startswith(c.domain + "-") and c.description for c in catalog.controls)
    assert "CC BY-ND 4.0" in catalog.info.attribution
    for name in ("SCF", "SOC 2", "ISO/IEC 27001:2022", "NIST CSF 1.1", "PCI DSS 4.0"):
        assert resolve([catalog], name) is not None, name
    assert resolve([catalog], "SCF 2099.1") is None


def test_pre_analysis_scores_every_control_against_the_kb(kit: Kit) -> None:
    result = kit.run_through(Step.RUN_SCF_PRE_ANALYSIS)
    assert result.artifact is not None and result.artifact.kind is K.SCF_PRE_ANALYSIS
    content = kit.content(K.SCF_PRE_ANALYSIS)
    rows = _by_id(content["controls"])
    assert len(rows) == len(shipped_catalog().controls)
    mfa = rows["IAC-06"]
    assert mfa["coverage"] != "none"
    top = kit.session.get(DocumentChunk, mfa["evidence_chunk_ids"][0])
    assert top is not None and top.heading_path == "Access Control Policy > Authentication"
    assert rows["VPM-06"]["coverage"] == "none"
    assert result.summary["strong"] == sum(r["coverage"] == "strong" for r in rows.values())
    assert result.summary["artifact_version"] == 1


def test_scope_is_the_crosswalk_of_the_framework(kit: Kit) -> None:
    kit.framework = "SOC 2"
    result = kit.run_through(Step.CREATE_SCOPE)
    scope = kit.content(K.SCOPE)
    controls = {c["control_id"]: c for d in scope["domains"] for c in d["controls"]}
    assert set(controls) == _linked(shipped_catalog(), "SOC 2")
    assert {d["domain"] for d in scope["out_of_scope"]}.isdisjoint(
        {c["domain"] for c in controls.values()}
    )
    pre = _by_id(kit.content(K.SCF_PRE_ANALYSIS)["controls"])
    assert all(c["coverage"] == pre[cid]["coverage"] for cid, c in controls.items())
    assert "SOC 2 CC6.1" in {r for c in controls.values() for r in c["requirements"]}
    assert scope["catalog"]["version"] == "2022.3"
    assert "CC BY-ND 4.0" in scope["attribution"]
    assert result.summary["framework"] == "SOC 2"


@pytest.mark.parametrize(
    ("framework", "code"), [("NOPE 9000", "unknown_framework"), (None, "framework_missing")]
)
def test_scope_refuses_an_unknown_or_missing_framework(
    kit: Kit, framework: str | None, code: str
) -> None:
    kit.run_through(Step.RUN_SCF_PRE_ANALYSIS)
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE, framework=framework))
    assert failure.value.code == code and not failure.value.retryable


def test_a_step_without_its_input_fails_clearly(kit: Kit) -> None:
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE))
    assert failure.value.code == "missing_input"
    assert "scf_pre_analysis" in failure.value.message


def _soa_rows(content: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["requirement_id"]: row for row in content["requirements"]}


def test_soa_has_a_row_per_requirement_with_its_reason(kit: Kit) -> None:
    kit.framework = "NIST CSF"
    kit.run_through(Step.CREATE_SCOPE)
    choice = resolve([shipped_catalog()], "NIST CSF")
    assert choice is not None
    result = kit.run_step(
        Step.CREATE_SOA_DRAFT,
        exclusions={"pr.ac-7": "Authentication is run by the parent company."},
    )
    soa = kit.content(K.SOA)
    rows = _soa_rows(soa)
    links = {r.id: r.control_ids for r in choice.framework.requirements}
    assert list(rows) == list(links)
    assert soa["catalog"]["version"] == "2022.3" and "CC BY-ND 4.0" in soa["attribution"]
    excluded = rows["PR.AC-7"]
    assert (excluded["applicable"], excluded["justification"], excluded["proposal"]) == (
        False,
        "Authentication is run by the parent company.",
        None,
    )
    for row in rows.values():
        assert row["implementation_status"] is None and row["owner"] is None
        assert row["scf_controls"] == list(links[row["requirement_id"]])
        if row["applicable"]:
            # The draft reason names the linked controls and what the documents show.
            assert all(c in row["justification"] for c in row["scf_controls"][:6])
            assert row["proposal"] in {p.value for p in Proposal} and row["reason"]
    documented = [r for r in rows.values() if r["proposal"] == "evidence_found"]
    assert documented and all(r["evidence"] for r in documented)
    cite = documented[0]["evidence"][0]
    assert set(cite) >= {"document", "heading_path", "pages", "chunk_id"}
    assert cite["document"] in documented[0]["justification"]
    assert result.summary["not_applicable"] == 1
    assert result.summary["rows"] == len(rows)


def test_an_excluded_scf_control_excludes_the_rows_linked_only_to_it(kit: Kit) -> None:
    kit.framework, kit.categories = "SOC 2", ["availability"]
    choice = resolve([shipped_catalog()], "SOC 2")
    assert choice is not None
    target = choice.framework.requirements[0]
    assert target.id == "A1.1"
    kit.run_through(Step.CREATE_SCOPE)
    why = "Capacity is the hosting provider's."
    kit.run_step(Step.CREATE_SOA_DRAFT, exclusions=dict.fromkeys(target.control_ids, why))
    soa = kit.content(K.SOA)
    rows = _soa_rows(soa)
    row = rows[target.id]
    assert (row["applicable"], row["excluded_by"], row["justification"]) == (
        False,
        "scf_controls",
        why,
    )
    sharing = [
        r
        for r in rows.values()
        if set(r["scf_controls"]) & set(target.control_ids)
        and not set(r["scf_controls"]) <= set(target.control_ids)
    ]
    for other in sharing:  # still linked to a control in scope: applicable, and says why
        assert other["applicable"] is True
        assert "excluded by the assessment" in other["justification"]
    headers = {c["control_id"]: c for c in soa["scf_controls"]}
    assert all(headers[c]["excluded"] for c in target.control_ids)
    assert soa["ignored_exclusions"] == []


def test_an_scf_soa_has_a_row_per_control(kit: Kit) -> None:
    kit.run_through(Step.CREATE_SOA_DRAFT)  # SCF itself: each control is its requirement
    rows = _soa_rows(kit.content(K.SOA))
    assert list(rows) == [c.id for c in shipped_catalog().controls]
    assert rows["IAC-06"]["proposal"] in ("evidence_found", "weak_evidence")
    assert rows["IAC-06"]["evidence"][0]["document"] == "access-control-policy.md"
    assert "potential gap" in rows["VPM-06"]["justification"]


def test_a_new_soa_draft_keeps_what_reviewers_set_on_the_approved_one(kit: Kit) -> None:
    kit.framework = "SOC 2"
    kit.run_through(Step.CREATE_SOA_DRAFT, approve=False)
    first = kit.latest(K.SOA)
    assert first is not None
    row = next(r for r in first.content["requirements"] if r["applicable"])["requirement_id"]
    amended = amended_content(
        first.content,
        K.SOA,
        [{"row": row, "changes": {"implementation_status": "implemented", "owner": "J. Roe"}}],
        actor_id="user:reviewer",
        reason="walked through it",
        based_on=first.version,
    )
    kit.add_artifact(K.SOA, amended)  # approved version 2
    kit.run_step(Step.CREATE_SOA_DRAFT)
    third = kit.latest(K.SOA)
    assert third is not None and third.version == 3
    kept = _soa_rows(third.content)[row]
    assert (kept["implementation_status"], kept["owner"], kept["carried_from"]) == (
        "implemented",
        "J. Roe",
        2,
    )
    carried = third.content["carried_forward"]
    assert carried["from_version"] == 2
    assert carried["rows"] == [
        {"framework": "SOC 2", "requirement_id": row, "fields": ["implementation_status", "owner"]}
    ]
    others = [r for r in third.content["requirements"] if r["requirement_id"] != row]
    assert all(r["implementation_status"] is None for r in others)


def test_soa_refuses_malformed_exclusions(kit: Kit) -> None:
    kit.run_through(Step.CREATE_SCOPE)
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SOA_DRAFT, exclusions={"IAC-06": ""}))
    assert failure.value.code == "bad_request"


def test_evidence_cites_the_best_passages_but_never_the_soa(kit: Kit) -> None:
    kit.run_through(Step.CREATE_SOA_DRAFT)
    soa = kit.latest(K.SOA)
    assert soa is not None
    # Reviewer declares NET-01 not applicable in an approved second SoA version.
    rows = [
        r | {"applicable": r["requirement_id"] != "NET-01"} for r in soa.content["requirements"]
    ]
    kit.add_artifact(K.SOA, soa.content | {"requirements": rows})
    kit.run_step(Step.INGEST_SOA)
    kit.run_step(Step.RUN_EVIDENCE_ANALYSIS)
    content = kit.content(K.EVIDENCE_ANALYSIS)
    evidence = _by_id(content["controls"])
    assert "NET-01" not in evidence
    mfa = evidence["IAC-06"]
    assert mfa["proposal"] in ("evidence_found", "weak_evidence") and mfa["reason"]
    assert mfa["evidence"][0]["document"] == "access-control-policy.md"
    assert mfa["evidence"][0]["heading_path"] == "Access Control Policy > Authentication"
    scores = [c["score"] for c in mfa["evidence"]]
    assert scores == sorted(scores, reverse=True)
    cited = {c["document"] for row in evidence.values() for c in row["evidence"]}
    assert not any(name.startswith("soa-v") for name in cited)
    assert {r["requirement_id"] for r in content["requirements"]} >= {"IAC-06"}


def test_a_gap_disappears_when_evidence_for_it_is_added(kit: Kit) -> None:
    kit.run_through(Step.CREATE_GAP_ANALYSIS)
    first = kit.content(K.GAP_ANALYSIS)
    gaps = _by_id(first["gaps"])
    assert "SCF VPM-06" in gaps
    assert gaps["SCF VPM-06"]["evidence_state"] == "no_evidence_found"
    assert first["summary"]["gaps"] + first["summary"]["met"] == first["summary"]["requirements"]

    kit.add_document("vulnerability-standard.md", VULNERABILITY_STANDARD)
    kit.run_step(Step.INGEST_DOCUMENTS)
    kit.run_step(Step.INDEX_KB)
    kit.run_step(Step.RUN_EVIDENCE_ANALYSIS)
    result = kit.run_step(Step.CREATE_GAP_ANALYSIS)
    assert result.summary["artifact_version"] == 2
    second = _by_id(kit.content(K.GAP_ANALYSIS)["gaps"])
    assert second.get("SCF VPM-06", {}).get("evidence_state") != "no_evidence_found"


def _requirement(control_id: str, proposal: str, **extra: Any) -> dict[str, Any]:
    return {
        "framework": "SCF",
        "requirement_id": control_id,
        "title": control_id,
        "scf_controls": [control_id],
        "proposal": proposal,
        "reason": f"{proposal} here",
        "evidence": [],
        **extra,
    }


def test_gap_severity_comes_from_scf_weighting_and_evidence_state(kit: Kit) -> None:
    catalog = shipped_catalog()
    used = {"GOV-01", "IAC-06", "BCD-11"}
    heavy = next(
        c.id for c in catalog.controls if c.details.get("weighting") == 10 and c.id not in used
    )
    light = next(c.id for c in catalog.controls if c.details.get("weighting") == 1)
    kit.add_artifact(
        K.EVIDENCE_ANALYSIS,
        {
            "requirements": [
                _requirement(heavy, "no_evidence_found"),
                _requirement(light, "no_evidence_found"),
                _requirement("GOV-01", "evidence_found"),
                _requirement("IAC-06", "weak_evidence"),
                _requirement("BCD-11", "evidence_found", assessed_status="not_implemented"),
            ]
        },
    )
    kit.run_step(Step.CREATE_GAP_ANALYSIS)
    gaps = _by_id(kit.content(K.GAP_ANALYSIS)["gaps"])
    assert gaps[f"SCF {heavy}"]["severity"] == "high"
    # Weighting x evidence state: nothing shown of a control SCF weights 1 is still low.
    assert gaps[f"SCF {light}"]["severity"] == "low"
    assert gaps[f"SCF {heavy}"]["severity_basis"]["importance"] == 10
    assert "SCF GOV-01" not in gaps  # evidence found and nobody said otherwise
    assert gaps["SCF BCD-11"]["evidence_state"] == "not_implemented"  # people decide
    for gap in gaps.values():
        assert gap["criteria"] and gap["condition"] and gap["scf_controls"]


@pytest.mark.parametrize(
    ("proposal", "kinds", "level"),
    [
        ("no_evidence_found", set(), 0),
        ("template_not_adopted", {"policy"}, 0),
        ("weak_evidence", {"policy"}, 1),
        ("evidence_found", {"policy"}, 2),
        ("evidence_found", {"policy", "record"}, 3),
        ("evidence_found", {"record", "metrics"}, 4),
    ],
)
def test_level_rule(proposal: str, kinds: set[str], level: int) -> None:
    assert level_for(proposal, kinds)[0] == level


def test_maturity_is_per_control_with_domain_rollups(kit: Kit) -> None:
    # Kinds come from the evidence analysis's document rows, never from the file names:
    # the "log" is a policy, the record is a log export whatever it is called.
    documents = [
        {"document_id": "d-policy", "filename": "log.md", "kind": "policy", "adoption": "adopted"},
        {
            "document_id": "d-record",
            "filename": "notes.txt",
            "kind": "record",
            "record_type": "log",
            "adoption": "adopted",
        },
    ]
    rows = [
        _requirement("IAC-01", "evidence_found")
        | {
            "domain": "IAC",
            "control_id": "IAC-01",
            "evidence": [{"document": "log.md", "document_id": "d-policy"}],
        },
        _requirement("IAC-06", "weak_evidence") | {"domain": "IAC", "control_id": "IAC-06"},
        _requirement("BCD-11", "evidence_found")
        | {
            "domain": "BCD",
            "control_id": "BCD-11",
            "evidence": [{"document": "notes.txt", "document_id": "d-record"}],
        },
    ]
    kit.add_artifact(K.EVIDENCE_ANALYSIS, {"controls": rows, "documents": documents})
    kit.run_step(Step.CREATE_MATURITY_ASSESSMENT)
    content = kit.content(K.MATURITY_ASSESSMENT)
    levels = {c["control_id"]: c["level"] for c in content["controls"]}
    assert levels == {"IAC-01": 2, "IAC-06": 1, "BCD-11": 3}
    iac = next(c for c in content["controls"] if c["control_id"] == "IAC-01")
    # Level 0 ("not performed") is never met beside a higher level.
    assert [c["met"] for c in iac["criteria"]][:4] == [False, True, True, False]
    domains = {d["domain"]: d for d in content["domains"]}
    assert (domains["IAC"]["level"], domains["IAC"]["target"]) == (1, 3)


def test_poam_items_have_fedramp_fields(kit: Kit) -> None:
    kit.add_artifact(
        K.EVIDENCE_ANALYSIS,
        {
            "requirements": [
                _requirement(
                    "VPM-06",
                    "no_evidence_found",
                    owner="Jane Roe",
                    target_date="2025-04-15",
                    note="scanner bought",
                )
            ]
        },
    )
    kit.add_artifact(
        K.GAP_ANALYSIS,
        {
            "gaps": [
                {
                    "control_id": "SCF VPM-06",
                    "requirement_id": "VPM-06",
                    "title": "Vulnerability",
                    "scf_controls": ["VPM-06"],
                    "nist_controls": ["RA-5", "RA-5(2)"],
                    "severity": "high",
                    "criteria": "VPM-06 ...",
                    "condition": "No scans.",
                },
                {
                    "control_id": "SCF TPM-05",
                    "requirement_id": "TPM-05",
                    "title": "Contracts",
                    "scf_controls": ["TPM-05"],
                    "severity": "low",
                    "criteria": "TPM-05 ...",
                    "condition": "Weak.",
                },
            ],
            "met": [],
        },
    )
    result = kit.run_step(Step.CREATE_POAM)
    items = kit.content(K.POAM)["items"]
    today = FIXED_NOW.date()
    assert [(i["id"], i["controls"], i["priority"]) for i in items] == [
        ("POAM-001", "RA-5, RA-5(2)", "P1"),
        ("POAM-002", "", "P3"),
    ]
    owned, unowned = items
    assert (owned["point_of_contact"], owned["scheduled_completion_date"]) == (
        "Jane Roe",
        "2025-04-15",
    )
    assert "scanner bought" in owned["comments"] and "VPM-06" in owned["comments"]
    assert "no NIST SP 800-53 rev5 control" in unowned["comments"]
    assert unowned["point_of_contact"] == "Unassigned (proposed role: Vendor Risk Manager)"
    # The last day of FedRAMP's 180-day window for a low risk: before detection + 180 days.
    assert date.fromisoformat(unowned["scheduled_completion_date"]) == today + timedelta(days=179)
    assert len(unowned["milestones"]) == 3 and unowned["original_risk_rating"] == "Low"
    assert owned["weakness"] == "No scans." and owned["original_detection_date"] == str(today)
    assert result.summary["items"] == 2 and result.summary["unassigned"] == 1


def test_a_redelivered_step_reuses_its_artifact(kit: Kit) -> None:
    kit.run_through(Step.RUN_EVIDENCE_ANALYSIS)
    first, again = kit.deliver_twice(run_analysis_step, Step.CREATE_GAP_ANALYSIS, "job-gap")
    assert again.artifact == first.artifact
    rows = kit.session.scalars(select(Artifact).where(Artifact.kind == K.GAP_ANALYSIS.value))
    assert len(rows.all()) == 1


def test_the_dispatcher_refuses_steps_it_does_not_own(kit: Kit) -> None:
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.INGEST_DOCUMENTS))
    assert failure.value.code == "unknown_step"
