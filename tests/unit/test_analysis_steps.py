"""The analysis steps: each artifact is derived from the KB and the artifacts before it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from orchestrator.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Artifact, DocumentChunk
from orchestrator.catalog.matching import resolve
from orchestrator.catalog.model import LoadedCatalog
from orchestrator.catalog.registry import shipped_catalog
from orchestrator.jobs.interface import JobFailure
from tests.unit.servicekit import (
    FIXED_NOW,
    VULNERABILITY_STANDARD,
    Kit,
    add_standard_documents,
    open_kit,
)
from workers.analysis.maturity import level_for
from workers.analysis.scoring import EVIDENCE_THRESHOLD
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
    choice = resolve([catalog], framework)
    assert choice is not None
    return {c for r in choice.framework.requirements for c in r.control_ids}


def test_the_shipped_catalogue_is_the_official_scf_workbook() -> None:
    catalog = shipped_catalog()
    assert (catalog.info.name, catalog.info.version) == ("Secure Controls Framework (SCF)",
                                                         "2022.3")
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
        {c["domain"] for c in controls.values()})
    pre = _by_id(kit.content(K.SCF_PRE_ANALYSIS)["controls"])
    assert all(c["coverage"] == pre[cid]["coverage"] for cid, c in controls.items())
    assert "SOC 2 CC6.1" in {r for c in controls.values() for r in c["requirements"]}
    assert scope["catalog"]["version"] == "2022.3"
    assert "CC BY-ND 4.0" in scope["attribution"]
    assert result.summary["framework"] == "SOC 2"


@pytest.mark.parametrize(("framework", "code"), [("NOPE 9000", "unknown_framework"),
                                                 (None, "framework_missing")])
def test_scope_refuses_an_unknown_or_missing_framework(kit: Kit, framework: str | None,
                                                       code: str) -> None:
    kit.run_through(Step.RUN_SCF_PRE_ANALYSIS)
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE, framework=framework))
    assert failure.value.code == code and not failure.value.retryable


def test_a_step_without_its_input_fails_clearly(kit: Kit) -> None:
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.CREATE_SCOPE))
    assert failure.value.code == "missing_input"
    assert "scf_pre_analysis" in failure.value.message


def test_soa_lists_in_scope_controls_with_justifications(kit: Kit) -> None:
    kit.framework = "NIST CSF"
    kit.run_through(Step.CREATE_SCOPE)
    result = kit.run_step(Step.CREATE_SOA_DRAFT,
                          exclusions={"iac-01": "Identity is run by the parent company."})
    soa = kit.content(K.SOA)
    rows = _by_id(soa["controls"])
    assert set(rows) == _linked(shipped_catalog(), "NIST CSF 1.1")
    assert "PRI-01" not in rows  # not in the NIST CSF crosswalk
    assert rows["IAC-01"]["applicable"] is False
    assert rows["IAC-01"]["justification"] == "Excluded: Identity is run by the parent company."
    assert soa["catalog"]["version"] == "2022.3" and "CC BY-ND 4.0" in soa["attribution"]
    assert rows["IAC-06"]["applicable"] is True
    assert "found documentation" in rows["IAC-06"]["justification"]
    assert "potential gap" in rows["VPM-06"]["justification"]
    assert result.summary["not_applicable"] == 1


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
    controls = [c | {"applicable": c["control_id"] != "NET-01"} for c in soa.content["controls"]]
    kit.add_artifact(K.SOA, soa.content | {"controls": controls})
    kit.run_step(Step.INGEST_SOA)
    kit.run_step(Step.RUN_EVIDENCE_ANALYSIS)
    evidence = _by_id(kit.content(K.EVIDENCE_ANALYSIS)["controls"])
    assert "NET-01" not in evidence
    mfa = evidence["IAC-06"]
    assert 1 <= len(mfa["citations"]) <= 3
    scores = [c["score"] for c in mfa["citations"]]
    assert scores == sorted(scores, reverse=True) and mfa["best_score"] == scores[0]
    assert mfa["citations"][0]["filename"] == "access-control-policy.md"
    assert mfa["citations"][0]["heading_path"] == "Access Control Policy > Authentication"
    assert mfa["citations"][0]["supports"] is True
    cited = {c["filename"] for row in evidence.values() for c in row["citations"]}
    assert not any(name.startswith("soa-v") for name in cited)


def test_a_gap_disappears_when_evidence_for_it_is_added(kit: Kit) -> None:
    kit.run_through(Step.CREATE_GAP_ANALYSIS)
    first = kit.content(K.GAP_ANALYSIS)
    gaps = _by_id(first["gaps"])
    assert "VPM-06" in gaps and "IAC-06" not in gaps
    assert gaps["VPM-06"]["best_score"] < EVIDENCE_THRESHOLD
    assert first["summary"]["gaps"] + first["summary"]["met"] == first["summary"]["controls"]

    kit.add_document("vulnerability-standard.md", VULNERABILITY_STANDARD)
    kit.run_step(Step.INGEST_DOCUMENTS)
    kit.run_step(Step.INDEX_KB)
    kit.run_step(Step.RUN_EVIDENCE_ANALYSIS)
    result = kit.run_step(Step.CREATE_GAP_ANALYSIS)
    assert result.summary["artifact_version"] == 2
    second = kit.content(K.GAP_ANALYSIS)
    assert "VPM-06" not in _by_id(second["gaps"])
    assert "VPM-06" in _by_id(second["met"])
    assert second["summary"]["gaps"] < first["summary"]["gaps"]


def test_gaps_are_ordered_by_severity_derived_from_the_score(kit: Kit) -> None:
    kit.add_artifact(K.EVIDENCE_ANALYSIS, {"controls": [
        _evidence_row("AST-01", "AST", 0.01), _evidence_row("AST-02", "AST", 0.10),
        _evidence_row("BCD-11", "BCD", 0.15), _evidence_row("BCD-01", "BCD", 0.40)]})
    kit.run_step(Step.CREATE_GAP_ANALYSIS)
    gaps = kit.content(K.GAP_ANALYSIS)["gaps"]
    assert [(g["control_id"], g["severity"]) for g in gaps] == [
        ("AST-01", "high"), ("AST-02", "medium"), ("BCD-11", "low")]


def _evidence_row(control_id: str, domain: str, score: float) -> dict[str, Any]:
    coverage = "strong" if score >= 0.30 else "partial" if score >= 0.18 else "none"
    return {"control_id": control_id, "domain": domain, "domain_name": domain,
            "title": control_id, "best_score": score, "coverage": coverage, "citations": []}


def test_maturity_levels_follow_evidence_and_gaps(kit: Kit) -> None:
    rows = [_evidence_row("IAC-01", "IAC", 0.5), _evidence_row("IAC-06", "IAC", 0.6),
            _evidence_row("BCD-01", "BCD", 0.2), _evidence_row("BCD-11", "BCD", 0.25),
            _evidence_row("CRY-01", "CRY", 0.4), _evidence_row("CRY-05", "CRY", 0.15),
            _evidence_row("AST-01", "AST", 0.0), _evidence_row("AST-02", "AST", 0.0)]
    kit.add_artifact(K.EVIDENCE_ANALYSIS, {"controls": rows})
    kit.run_step(Step.CREATE_GAP_ANALYSIS)
    kit.run_step(Step.CREATE_MATURITY_ASSESSMENT)
    levels = {d["domain"]: (d["level"], d["label"])
              for d in kit.content(K.MATURITY_ASSESSMENT)["domains"]}
    assert levels == {"IAC": (5, "Continuously Improving"), "BCD": (4, "Quantitatively Controlled"),
                      "CRY": (2, "Planned & Tracked"), "AST": (0, "Not Performed")}

    # An approved gap analysis edited by a reviewer is the authority on gaps.
    gap_analysis = kit.content(K.GAP_ANALYSIS)
    extra = {"control_id": "IAC-06", "domain": "IAC", "severity": "high"}
    kit.add_artifact(K.GAP_ANALYSIS, gap_analysis | {"gaps": [*gap_analysis["gaps"], extra]})
    kit.run_step(Step.CREATE_MATURITY_ASSESSMENT)
    iac = next(d for d in kit.content(K.MATURITY_ASSESSMENT)["domains"] if d["domain"] == "IAC")
    assert (iac["level"], iac["gaps"], iac["high_severity_gaps"]) == (2, 1, 1)


@pytest.mark.parametrize(("controls", "evidence", "strong", "high", "level"), [
    (3, 0, 0, 3, 0), (3, 0, 0, 2, 1), (3, 1, 0, 0, 2), (3, 2, 0, 0, 3), (3, 3, 1, 0, 4),
    (3, 3, 3, 0, 5), (3, 2, 2, 1, 2), (0, 0, 0, 0, 0)])
def test_level_rule(controls: int, evidence: int, strong: int, high: int, level: int) -> None:
    assert level_for(controls, evidence, strong, high) == level


def test_poam_has_one_dated_owned_item_per_gap(kit: Kit) -> None:
    kit.add_artifact(K.GAP_ANALYSIS, {"gaps": [
        {"control_id": "VPM-06", "domain": "VPM", "title": "Vulnerability Scanning",
         "severity": "high", "finding": "No scans."},
        {"control_id": "TPM-05", "domain": "TPM", "title": "Third-Party Contract Requirements",
         "severity": "low", "finding": "Weak."}], "met": []})
    kit.add_artifact(K.MATURITY_ASSESSMENT, {"domains": [{"domain": "VPM", "level": 1}]})
    result = kit.run_step(Step.CREATE_POAM)
    items = kit.content(K.POAM)["items"]
    today = FIXED_NOW.date()
    assert [(i["id"], i["control_id"], i["priority"]) for i in items] == [
        ("POAM-001", "VPM-06", "P1"), ("POAM-002", "TPM-05", "P3")]
    assert date.fromisoformat(items[0]["milestone_date"]) == today + timedelta(days=30)
    assert date.fromisoformat(items[1]["milestone_date"]) == today + timedelta(days=180)
    assert items[0]["owner_role"] == "Vulnerability Management Lead"
    assert items[0]["weakness"] == "No scans."
    assert "by recurring vulnerability scanning" in items[0]["remediation"]  # SCF text
    assert items[0]["domain_maturity"] == 1
    assert result.summary == {"items": 2, "P1": 1, "P2": 0, "P3": 1, "artifact_kind": "poam",
                              "artifact_version": 1}


def test_a_redelivered_step_reuses_its_artifact(kit: Kit) -> None:
    kit.run_through(Step.RUN_EVIDENCE_ANALYSIS)
    context = kit.context(Step.CREATE_GAP_ANALYSIS, job_id="job-gap")
    first = run_analysis_step(context)
    kit.session.commit()
    again = run_analysis_step(context)
    kit.session.commit()
    assert again.artifact == first.artifact
    rows = kit.session.scalars(select(Artifact).where(Artifact.kind == K.GAP_ANALYSIS.value))
    assert len(rows.all()) == 1


def test_the_dispatcher_refuses_steps_it_does_not_own(kit: Kit) -> None:
    with pytest.raises(JobFailure) as failure:
        run_analysis_step(kit.context(Step.INGEST_DOCUMENTS))
    assert failure.value.code == "unknown_step"
