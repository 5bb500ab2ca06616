"""Reviewers' decisions on real drafts (strongdm/comply's policies against ISO/IEC
27001:2022):

- statuses confirmed in bulk read apart from those decided one by one, in the SoA's CSV
  export, the report's JSON and HTML: who, when, how many rows in one action;
- the report's gap section counts findings per family and severity (equal to the gap
  draft's), each finding in full in the appendix;
- a gap finding marked "not a gap" with a reason leaves the POA&M and the report's gap
  list (shown as dismissed, with the reason and who), carries into the next gap analysis
  and into the next period's assessment, and is flagged for review, open again, once a
  document it rests on is replaced.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.console.amend_fields import changes_of
from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Document
from orchestrator.knowledge.embedder import set_default_embedder
from orchestrator.knowledge.minilm_onnx import shared_minilm
from orchestrator.service.amendments import amended_content
from orchestrator.service.draft_rows import names_of
from tests.support.services import FIXED_NOW, Kit, add_assessment_and_run, open_kit
from tests.support.shared_data import SHARED_DATA
from workers.analysis.dismissals import dismissed_gaps
from workers.reporting.figures import figures

COMPLY = SHARED_DATA / "policies" / "markdown" / "comply"
FRAMEWORK = "ISO/IEC 27001:2022"
LEAD = "user:lead@acme"
ASSESSOR = "user:assessor@acme"
WHY = "The risk register is kept in the GRC tool, reviewed with the auditor on site."

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(not COMPLY.is_dir(), reason=f"the real policy set is absent ({COMPLY})"),
]


def _amend(kit: Kit, kind: K, entries: list[dict[str, Any]], by: str, reason: str) -> None:
    """A reviewer's amendment of the latest draft, approved as its next version."""
    latest = kit.latest(kind)
    assert latest is not None
    changed = amended_content(
        latest.content, kind.value, entries, actor_id=by, reason=reason, based_on=latest.version
    )
    kit.add_artifact(kind, changed)
    kit.session.commit()


def _confirm_soa(kit: Kit) -> str:
    """One row decided alone, then every other in-scope row confirmed in one filter per
    proposed status (what the issue saw: the proposals confirmed in bulk). Returns the row
    decided alone."""
    kit.run_through(Step.CREATE_SOA_DRAFT, approve=False)
    soa = kit.content(K.SOA)
    rows = soa["requirements"]
    names = names_of(rows, "requirement_id")
    alone = next(n for n, r in zip(names, rows, strict=True) if r.get("applicable"))
    _amend(
        kit,
        K.SOA,
        [{"row": alone, "changes": {"implementation_status": "partially_implemented"}}],
        ASSESSOR,
        "walked through with the process owner",
    )
    proposed = {
        r.get("proposed_implementation_status")
        for r in kit.content(K.SOA)["requirements"]
        if r.get("applicable") and r.get("implementation_status") is None
    }
    entries = [
        {
            "filter": {"undecided": True, "proposed_implementation_status": status},
            "changes": {"implementation_status": status},
        }
        for status in sorted(s for s in proposed if s)
    ]
    _amend(kit, K.SOA, entries, LEAD, "proposals confirmed")
    kit.run_through(Step.CREATE_GAP_ANALYSIS, start=Step.INGEST_SOA)
    return alone


def _dismiss(kit: Kit) -> str:
    """A reviewer marks the first finding that cites a document "not a gap"."""
    gaps = kit.content(K.GAP_ANALYSIS)["gaps"]
    chosen = next((g for g in gaps if g["documents"]), gaps[0])
    name = str(chosen["control_id"])
    entry = {"row": name, "changes": {"not_a_gap": True, "not_a_gap_reason": WHY}}
    _amend(kit, K.GAP_ANALYSIS, [entry], ASSESSOR, "seen on site")
    return name


@dataclass
class Decided:
    kit: Kit
    alone: str
    """The SoA row whose status a reviewer decided alone."""
    dismissed: str
    """The finding a reviewer marked not a gap."""


@pytest.fixture(scope="module")
def decided(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Decided]:
    set_clock(lambda: FIXED_NOW)
    set_default_embedder(shared_minilm())
    try:
        with open_kit(tmp_path_factory.mktemp("decisions")) as kit:
            kit.framework = FRAMEWORK
            for path in sorted(COMPLY.glob("*.md")):
                kit.add_document(path.name, path.read_bytes())
            alone = _confirm_soa(kit)
            dismissed = _dismiss(kit)
            kit.run_through(Step.CREATE_REPORT, start=Step.CREATE_MATURITY_ASSESSMENT)
            yield Decided(kit, alone, dismissed)
    finally:
        set_clock(None)
        set_default_embedder(None)


def _exports(kit: Kit) -> dict[str, Path]:
    return {e["kind"]: Path(e["path"]) for e in kit.content(K.REPORT)["exports"]}


def _html(kit: Kit) -> str:
    return Path(kit.content(K.REPORT)["path"]).read_text(encoding="utf-8")


def test_the_soa_export_says_which_statuses_were_confirmed_in_bulk(decided: Decided) -> None:
    kit = decided.kit
    soa = kit.content(K.SOA)
    rows = list(csv.DictReader(io.StringIO(_exports(kit)["soa_csv"].read_text("utf-8-sig"))))
    assert len(rows) == len(soa["requirements"])
    by_name = {r["Requirement"]: r["Decided"] for r in rows}
    assert by_name[decided.alone].startswith(f"one by one by {ASSESSOR}")
    actions = [a for a in soa["amendments"][-1]["selections"] if a["selected"] > 1]
    assert actions, "the proposals were confirmed by filters selecting many rows"
    for action in actions:
        for name in action["names"]:
            said = by_name[name]
            assert said.startswith(f"in bulk by {LEAD}, "), said
            assert f"one filter action set {action['selected']} rows" in said
    chosen = {decided.alone} | {n for a in soa["amendments"][-1]["selections"] for n in a["names"]}
    assert all(d == "not decided by a person" for n, d in by_name.items() if n not in chosen)


def test_the_report_shows_each_bulk_action_beside_rows_decided_alone(decided: Decided) -> None:
    kit = decided.kit
    soa = kit.content(K.SOA)
    report = json.loads(_exports(kit)["json"].read_text("utf-8"))
    decisions = report["soa_decisions"]
    actions = soa["amendments"][-1]["selections"]
    in_bulk = sum(a["selected"] for a in actions if a["selected"] > 1)
    alone = 1 + sum(a["selected"] for a in actions if a["selected"] == 1)
    assert (decisions["decided_in_bulk"], decisions["decided_one_by_one"]) == (in_bulk, alone)
    assert [(a["by"], a["rows"]) for a in decisions["bulk_actions"]] == [
        (LEAD, a["selected"]) for a in actions if a["selected"] > 1
    ]
    html = _html(kit)
    assert f"{in_bulk + alone} rows, {alone} one by one and {in_bulk} in bulk" in html
    for action in decisions["bulk_actions"]:
        assert f"{LEAD}, {action['at']}: {action['rows']} rows in one action (filter)" in html


def test_a_finding_marked_not_a_gap_leaves_the_poam_and_the_gap_list(decided: Decided) -> None:
    kit = decided.kit
    name = decided.dismissed
    gaps = kit.content(K.GAP_ANALYSIS)
    assert name not in {i["control_id"] for i in kit.content(K.POAM)["items"]}
    report = json.loads(_exports(kit)["json"].read_text("utf-8"))
    assert [(d["control_id"], d["reason"], d["by"]) for d in report["not_a_gap"]] == [
        (name, WHY, ASSESSOR)
    ]
    counted = figures(kit.content(K.SOA), kit.content(K.EVIDENCE_ANALYSIS), gaps)
    assert counted.not_a_gap == 1
    assert counted.gaps == len(gaps["gaps"]) - 1
    assert report["summary"]["Findings dismissed as not a gap (by a reviewer)"] == 1
    html = _html(kit)
    gap_list, dismissed = html.split('id="gaps"')[1].split("</section>")[0].split("Dismissed")
    assert f"<td>{name}</td>" not in gap_list
    assert f"<td>{name}</td>" in dismissed and WHY in dismissed and ASSESSOR in dismissed
    items = list(csv.DictReader(io.StringIO(_exports(kit)["poam_csv"].read_text("utf-8-sig"))))
    assert len(items) == len(gaps["gaps"]) - 1


def _sheets(path: Path) -> dict[str, list[list[str]]]:
    from openpyxl import load_workbook

    book = load_workbook(path, read_only=True)
    return {
        sheet.title: [
            ["" if v is None else str(v) for v in row] for row in sheet.iter_rows(values_only=True)
        ]
        for sheet in book.worksheets
    }


def test_the_soa_and_the_findings_open_in_a_spreadsheet_as_the_report_lists_them(
    decided: Decided,
) -> None:
    kit = decided.kit
    exports = _exports(kit)
    soa_csv = list(csv.reader(io.StringIO(exports["soa_csv"].read_text("utf-8-sig"))))
    [soa_sheet] = _sheets(exports["soa_xlsx"]).values()
    assert soa_sheet == soa_csv and len(soa_sheet) == len(kit.content(K.SOA)["requirements"]) + 1
    findings = list(csv.DictReader(io.StringIO(exports["findings_csv"].read_text("utf-8-sig"))))
    open_gaps = [g["control_id"] for g in kit.content(K.GAP_ANALYSIS)["gaps"]]
    assert [f["Control"] for f in findings] == [c for c in open_gaps if c != decided.dismissed]
    sheets = _sheets(exports["findings_xlsx"])
    assert list(sheets) == ["Gap findings", "Not a gap"]
    assert [row[0] for row in sheets["Gap findings"][1:]] == [f["Control"] for f in findings]
    [header, dismissed] = sheets["Not a gap"]
    assert header[:4] == ["Finding", "Title", "Severity proposed", "Why not a gap"]
    assert (dismissed[0], dismissed[3], dismissed[4]) == (decided.dismissed, WHY, ASSESSOR)


def test_not_a_gap_needs_a_reason_and_only_a_finding_takes_it(decided: Decided) -> None:
    kit = decided.kit
    gaps = kit.latest(K.GAP_ANALYSIS)
    soa = kit.latest(K.SOA)
    assert gaps is not None and soa is not None
    other = next(g["control_id"] for g in gaps.content["gaps"] if not g.get("not_a_gap"))
    with pytest.raises(InvalidInput, match="needs a reason"):
        amended_content(
            gaps.content,
            K.GAP_ANALYSIS.value,
            [{"row": other, "changes": {"not_a_gap": True}}],
            actor_id=ASSESSOR,
            reason="r",
            based_on=gaps.version,
        )
    # The console's amendment form asks the same of the service.
    form = {"not_a_gap": "yes", "not_a_gap_reason": f" {WHY} ", "owner": ""}
    asked = changes_of(K.GAP_ANALYSIS, form)
    assert asked == {"not_a_gap": True, "not_a_gap_reason": WHY}
    marked = amended_content(
        gaps.content,
        K.GAP_ANALYSIS.value,
        [{"row": other, "changes": asked}],
        actor_id=ASSESSOR,
        reason="r",
        based_on=gaps.version,
    )
    assert {d["control_id"] for d in dismissed_gaps(marked)} == {decided.dismissed, other}
    row = soa.content["requirements"][0]["requirement_id"]
    with pytest.raises(InvalidInput, match="cannot amend not_a_gap"):
        amended_content(
            soa.content,
            K.SOA.value,
            [{"row": row, "changes": {"not_a_gap": True, "not_a_gap_reason": WHY}}],
            actor_id=ASSESSOR,
            reason="r",
            based_on=soa.version,
        )


def test_the_gap_section_counts_per_family_equal_the_drafts(decided: Decided) -> None:
    kit = decided.kit
    gaps = kit.content(K.GAP_ANALYSIS)
    still_gaps = [g for g in gaps["gaps"] if not g.get("not_a_gap")]
    report = json.loads(_exports(kit)["json"].read_text("utf-8"))
    families = report["gaps_by_family"]
    *each, total = families
    assert total["family"] == "All families" and total["findings"] == len(still_gaps)
    for level in ("high", "medium", "low"):
        assert total[level] == sum(1 for g in still_gaps if g["severity"] == level)
        assert sum(f[level] for f in each) == total[level]
    for family in each:
        named = [
            g
            for g in still_gaps
            if f"{g['framework']} {g['requirement_id']}".startswith(family["family"])
        ]
        assert family["findings"] >= len(named) > 0, family
    assert sum(f["findings"] for f in each) == len(still_gaps)
    html = _html(kit)
    body = html.split('id="gaps"')[1].split("</section>")[0]
    assert f"<h3>Findings ({len(still_gaps)})</h3>" in body
    assert "Condition:" not in body, "each finding in full is in the appendix"
    appendix = html.split('id="findings"')[1].split("</section>")[0]
    assert all(f"<td>{g['control_id']}</td>" in appendix for g in still_gaps)
    assert appendix.count("Condition:") == len(still_gaps)


def test_not_a_gap_carries_forward_until_its_document_is_replaced(decided: Decided) -> None:
    kit = decided.kit
    name = decided.dismissed
    kit.run_through(Step.CREATE_POAM, start=Step.CREATE_GAP_ANALYSIS)
    redrafted = _finding(kit, name)
    assert redrafted["not_a_gap"] is True and redrafted["not_a_gap_reason"] == WHY
    assert redrafted["carried_from"] and not redrafted.get("not_a_gap_review")
    assert name not in {i["control_id"] for i in kit.content(K.POAM)["items"]}

    replaced = sorted(redrafted["evidence_basis"])[0]
    old = kit.session.query(Document).filter_by(filename=replaced).one()
    new = kit.add_document(replaced, Path(COMPLY / replaced).read_text() + "\nRevised.\n")
    old.life_status, old.superseded_by = "superseded", new.id
    new.series_id = old.series_id or old.id
    new.series_version = old.series_version + 1
    kit.session.commit()
    kit.run_through(Step.INDEX_KB, start=Step.INGEST_DOCUMENTS, approve=False)
    kit.run_through(Step.CREATE_POAM, start=Step.RUN_EVIDENCE_ANALYSIS)
    flagged = _finding(kit, name)
    assert flagged["not_a_gap"] is True and replaced in flagged["not_a_gap_review"]
    assert name in {i["control_id"] for i in kit.content(K.POAM)["items"]}, "open again"

    # Deciding again on the new evidence dismisses it once more.
    entry = {"row": name, "changes": {"not_a_gap": True, "not_a_gap_reason": WHY}}
    _amend(kit, K.GAP_ANALYSIS, [entry], ASSESSOR, "seen again")
    kit.run_step(Step.CREATE_POAM)
    assert not _finding(kit, name).get("not_a_gap_review")
    assert name not in {i["control_id"] for i in kit.content(K.POAM)["items"]}


def test_the_next_periods_assessment_carries_the_decision(decided: Decided) -> None:
    kit = decided.kit
    name = decided.dismissed
    approved = kit.latest(K.GAP_ANALYSIS)
    assert approved is not None and approved.status == "approved"
    following, run = add_assessment_and_run(
        kit.session, "FY26 assessment", carry_over_from=kit.assessment.id
    )
    kit.session.commit()
    current = kit.session.query(Document).filter_by(
        assessment_id=kit.assessment.id, life_status="current"
    )
    documents = [(d.filename, Path(d.storage_path).read_bytes()) for d in current]
    kit.assessment, kit.run = following, run
    for filename, data in documents:
        kit.add_document(filename, data)
    kit.run_through(Step.CREATE_GAP_ANALYSIS)
    carried = _finding(kit, name)
    assert carried["not_a_gap"] is True and carried["not_a_gap_reason"] == WHY
    assert not carried.get("not_a_gap_review"), "the same documents: the decision holds"
    over = kit.content(K.GAP_ANALYSIS)["not_a_gap_carried_over"]
    assert over["artifact_id"] == str(approved.id) and over["rows"][0]["control_id"] == name


def _finding(kit: Kit, name: str) -> dict[str, Any]:
    return next(g for g in kit.content(K.GAP_ANALYSIS)["gaps"] if g["control_id"] == name)
