"""Drafts an assessor would sign, on real policy sets: strongdm/comply's policies assessed
against SOC 2 (every category, with the FedRAMP AC-2 form, an unfilled template) and
against ISO/IEC 27001:2022.

- gap findings: one per requirement in scope (sub-items rolled up and named inside), a
  condition that quotes its passage or says what was looked for, consistent with the
  document judgements, causes that differ, recommendations without products or URLs, a
  severity with its stated basis;
- POA&M: NIST ids or the reason there are none, milestones from the recommendation's own
  steps dated by severity, resources estimated with a basis or flagged undecided, and the
  same point of contact in the report's JSON and the CSV after an owner is set on it;
- report: every figure equal to the drafts' in-scope counts, and a warning when the
  assessor's conclusion contradicts them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.knowledge.embedder import set_default_embedder
from orchestrator.knowledge.minilm_onnx import shared_minilm
from orchestrator.service.amendments import amended_content
from tests.support import draft_quality as quality
from tests.support.services import FIXED_NOW, Kit, open_kit
from tests.support.shared_data import SHARED_DATA
from workers.analysis.requirement_rollup import label_of
from workers.reporting.render import WARNING_LABEL, statement_rows

DATA = SHARED_DATA / "policies"
COMPLY = DATA / "markdown" / "comply"
AC2_TEMPLATE = DATA / "docx" / "FedRAMP_ac-2_v2.1.docx"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
OWNER = "Dana Reyes"

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(
        not COMPLY.is_dir() or not AC2_TEMPLATE.is_file(),
        reason=f"the real policy set is absent ({DATA})",
    ),
]


def _run(kit: Kit) -> None:
    """Through the POA&M; a reviewer names a person on the first item; then the report."""
    kit.run_through(Step.CREATE_POAM)
    poam = kit.latest(K.POAM)
    assert poam is not None and poam.content["items"]
    first = poam.content["items"][0]["id"]
    changed = amended_content(
        poam.content,
        K.POAM.value,
        [{"row": first, "changes": {"owner": OWNER}}],
        actor_id="user:reviewer",
        reason="owner named",
        based_on=poam.version,
    )
    kit.add_artifact(K.POAM, changed)
    kit.session.commit()
    kit.run_step(Step.CREATE_REPORT)


@pytest.fixture(scope="module", params=["SOC 2", "ISO/IEC 27001:2022"])
def kit(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    set_default_embedder(shared_minilm())
    try:
        with open_kit(tmp_path_factory.mktemp("signable")) as kit:
            kit.framework = request.param
            if request.param == "SOC 2":
                kit.categories = ["availability", "processing integrity", "confidentiality"]
                kit.categories.append("privacy")
            for path in sorted(COMPLY.glob("*.md")):
                kit.add_document(path.name, path.read_bytes())
            if request.param == "SOC 2":
                kit.add_document(AC2_TEMPLATE.name, AC2_TEMPLATE.read_bytes(), media_type=DOCX)
            _run(kit)
            yield kit
    finally:
        set_clock(None)
        set_default_embedder(None)


def _exports(kit: Kit) -> dict[str, Path]:
    return {e["kind"]: Path(e["path"]) for e in kit.content(K.REPORT)["exports"]}


def test_one_finding_per_requirement_in_scope_with_sub_items_named(kit: Kit) -> None:
    evidence, gaps = kit.content(K.EVIDENCE_ANALYSIS), kit.content(K.GAP_ANALYSIS)
    measured = quality.finding_quality(evidence, gaps)
    print(kit.framework, measured)
    assert measured["most_findings_per_requirement"] <= 1
    assert measured["findings"] <= measured["requirements_in_scope"]
    in_scope = quality.requirements_in_scope(evidence)
    assert {g["control_id"] for g in gaps["gaps"]} <= in_scope
    assert gaps["summary"]["requirements"] == len(in_scope)
    for gap in gaps["gaps"]:
        for item in gap["sub_items"]:
            assert label_of(gap["framework"], item) == gap["control_id"]
            assert item in gap["condition"], (gap["control_id"], gap["condition"])
    if kit.framework.startswith("ISO"):
        assert any(g["sub_items"] for g in gaps["gaps"]), "ISO clauses have lettered sub-items"
        assert not any("(" in g["requirement_id"] for g in gaps["gaps"])


def test_causes_differ_and_recommendations_name_no_product(kit: Kit) -> None:
    measured = quality.finding_quality(
        kit.content(K.EVIDENCE_ANALYSIS), kit.content(K.GAP_ANALYSIS)
    )
    assert measured["distinct_causes"] >= 0.9
    assert measured["clean_recommendations"] == 1.0
    for gap in kit.content(K.GAP_ANALYSIS)["gaps"]:
        assert gap["recommendation_steps"] and gap["effect"] and gap["cause"]
        assert gap["severity_basis"]["stated"].startswith(gap["severity"])


def test_conditions_quote_their_passage_or_say_what_was_looked_for(kit: Kit) -> None:
    evidence = kit.content(K.EVIDENCE_ANALYSIS)
    judged = {d["filename"]: d for d in evidence["documents"]}
    quoted: dict[str, list[str]] = {}
    for row in evidence["requirements"]:
        label = label_of(row["framework"], row["requirement_id"])
        said = quoted.setdefault(label, [])
        said.extend(c["quote"] for c in row.get("candidates", []) if c.get("quote"))
        said.extend(re.findall(r"“([^”]+)”", row["reason"] or ""))  # the sentence it rests on
    for gap in kit.content(K.GAP_ANALYSIS)["gaps"]:
        condition = gap["condition"]
        quotes = quoted[gap["control_id"]]
        if gap["evidence_state"] == "template_not_adopted":
            named = [d for d in judged if d in condition]
            assert named, condition
            for name in named:
                document = judged[name]
                assert document["adoption"] != "adopted", (name, condition)
                if document["adoption_basis"].startswith("drafted, not adopted"):
                    assert f"{name} is a draft" in condition and "template" not in condition
        elif quotes and gap["evidence_state"] == "weak_evidence":
            assert any(q in condition for q in quotes), condition
        else:
            assert condition.count("“") >= 1 or "Looked for" in condition, condition
        # An adopted document is never called an unfilled template.
        for name, document in judged.items():
            if document["adoption"] == "adopted":
                assert f"{name} is an unfilled template" not in condition


def test_poam_items_have_nist_ids_or_a_reason_dated_steps_and_resources(kit: Kit) -> None:
    poam = kit.content(K.POAM)
    measured = quality.poam_quality(poam)
    print(kit.framework, measured)
    assert measured["nist_or_reason"] == 1.0
    assert measured["distinct_milestones"] >= 0.8
    assert measured["resources_stated"] == 1.0
    gaps = {g["control_id"]: g for g in kit.content(K.GAP_ANALYSIS)["gaps"]}
    for item in poam["items"]:
        steps = gaps[item["control_id"]]["recommendation_steps"]
        titles = [m["title"] for m in item["milestones"] if not m.get("interim")]
        assert titles == steps
        dates = [m["date"] for m in item["milestones"]]
        assert dates == sorted(dates) and dates[-1] <= item["scheduled_completion_date"]
        assert "To be estimated" not in item["resources_required"]
    # Dates spread by severity: a high item's first step comes sooner than a low one's.
    first = {i["severity"]: i["milestones"][0]["date"] for i in reversed(poam["items"])}
    if "high" in first and "medium" in first:
        assert first["high"] <= first["medium"]


def test_report_counts_equal_the_drafts_and_contacts_agree(kit: Kit) -> None:
    exports = _exports(kit)
    evidence, gaps = kit.content(K.EVIDENCE_ANALYSIS), kit.content(K.GAP_ANALYSIS)
    measured = quality.report_quality(evidence, gaps, exports)
    assert measured["report_counts_equal"] == 1.0, quality.drafts_counts(evidence, gaps)
    in_json, in_csv = quality.contacts(exports)
    assert in_json == in_csv
    assert OWNER in in_json.values()


def test_a_conclusion_the_figures_contradict_is_flagged(kit: Kit) -> None:
    def rows(conclusion: str) -> dict[str, str]:
        return dict(statement_rows(kit.report_input(statement={"conclusion": conclusion})))

    gaps = kit.content(K.GAP_ANALYSIS)["summary"]
    assert gaps["gaps"] > gaps["requirements"] / 2  # these policy sets leave most unmet
    flagged = rows("The policies address most requirements of the framework.")
    assert re.search(r"\d+ of the \d+ requirements in scope are gaps", flagged[WARNING_LABEL])
    assert WARNING_LABEL not in rows("Most requirements are not met; significant gaps remain.")
