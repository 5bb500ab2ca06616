"""Citations an assessor can use, on real documents: an index that quotes the criteria never
supports on its own, a banner or heading is never a first citation, a policy whose
approval and date fields are unfilled is drafted (not adopted) as a whole, and reasons
quote the sentence they rest on.

The documents: strongdm/comply's SOC 2 policies, the compliance dashboard rendered from
them (an index that quotes each criterion's text beside the policies that satisfy it), and
one ISO/IEC 27001 policy of the isms-core project, whose approval and dates are placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.knowledge.embedder import set_default_embedder
from orchestrator.knowledge.minilm_onnx import shared_minilm
from tests.support.services import FIXED_NOW, Kit, open_kit
from tests.support.shared_data import SHARED_DATA
from workers.analysis.document_judgement import judge_text
from workers.analysis.sections import non_normative

DATA = SHARED_DATA
COMPLY = DATA / "policies" / "markdown" / "comply"
DASHBOARD = DATA / "policies" / "html" / "ACME-compliance-dashboard.html"
ISO_POLICY = DATA / "evidence-iso27001" / "policies" / "isms-op-logging.md"

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(
        not COMPLY.is_dir() or not DASHBOARD.is_file() or not ISO_POLICY.is_file(),
        reason=f"the real policy sets are absent ({DATA})",
    ),
]


@pytest.fixture(scope="module")
def kit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    set_default_embedder(shared_minilm())
    try:
        with open_kit(tmp_path_factory.mktemp("citations")) as kit:
            kit.framework, kit.categories = "SOC 2", ["availability", "confidentiality"]
            for path in sorted(COMPLY.glob("*.md")):
                kit.add_document(path.name, path.read_bytes())
            kit.add_document(DASHBOARD.name, DASHBOARD.read_bytes(), media_type="text/html")
            kit.add_document(ISO_POLICY.name, ISO_POLICY.read_bytes())
            kit.run_through(Step.RUN_EVIDENCE_ANALYSIS)
            yield kit
    finally:
        set_clock(None)
        set_default_embedder(None)


def _rows(kit: Kit) -> list[dict[str, Any]]:
    return [r for r in kit.content(K.EVIDENCE_ANALYSIS)["requirements"] if r["proposal"]]


def test_the_dashboard_is_an_index_and_never_supports_on_its_own(kit: Kit) -> None:
    rows = _rows(kit)
    listed = [c for r in rows for c in r["candidates"] if c["document"] == DASHBOARD.name]
    assert listed, "the index is still shown to the reviewer, marked"
    assert all(
        "index or crosswalk" in c["verdict"] or "requirement ids" in c["verdict"] for c in listed
    )
    for row in rows:
        supporting = {c["document"] for c in row["evidence"]}
        assert DASHBOARD.name not in supporting, (row["requirement_id"], row["reason"])


def test_a_first_citation_states_a_practice_whenever_a_listed_document_does(kit: Kit) -> None:
    checked = 0
    for row in _rows(kit):
        candidates = row["candidates"]
        if not any("not evidence on its own" not in c["verdict"] for c in candidates):
            continue
        checked += 1
        first = candidates[0]
        assert "not evidence on its own" not in first["verdict"], (row["requirement_id"], first)
        assert non_normative(first["heading_path"], first["excerpt"]) is None, first
    assert checked >= 10


def test_the_policy_with_unfilled_approval_fields_is_drafted_as_a_whole(kit: Kit) -> None:
    (judged,) = [
        d for d in kit.content(K.EVIDENCE_ANALYSIS)["documents"] if d["filename"] == ISO_POLICY.name
    ]
    assert judged["adoption"] == "template_not_adopted"
    assert judged["adoption_basis"].startswith("drafted, not adopted")
    assert "Approved By: [Information Security Manager / Management]" in judged["unfilled_fields"]
    assert "Created Date: [Date]" in judged["unfilled_fields"]
    for row in _rows(kit):  # none of its passages is listed or cited, one by one or at all
        assert ISO_POLICY.name not in {c["document"] for c in row["candidates"] + row["evidence"]}
    # The comply policies, whose fields are filled in, stay adopted.
    adopted = [
        d
        for d in kit.content(K.EVIDENCE_ANALYSIS)["documents"]
        if d["filename"].endswith(".md") and d["filename"] != ISO_POLICY.name
    ]
    assert adopted and all(d["adoption"] == "adopted" for d in adopted)


def test_unfilled_fields_are_found_in_any_case_and_bracket_style() -> None:
    passages = [
        ("Policy", "Approved by: ________\n| **Effective Date** | TBD |\nOwner: {{owner}}"),
        ("Policy", "[COMPANY NAME] backs up data nightly.\nDate: 2024-01-01"),
    ]
    judged = judge_text("d", "policy.md", passages)
    assert not judged.adopted and judged.adoption_basis.startswith("drafted, not adopted")
    assert set(judged.unfilled) == {
        "Approved by: ________",
        "Effective Date: TBD",
        "Owner: {{owner}}",
        "[COMPANY NAME]",
    }
    filled = judge_text(
        "d", "policy.md", [("Policy", "Approved by: Jane Doe, CISO\nDate: 2024-01-01")]
    )
    assert filled.adopted and filled.unfilled == ()


def test_reasons_quote_the_sentence_they_rest_on(kit: Kit) -> None:
    found = [r for r in _rows(kit) if r["proposal"] == "evidence_found"]
    assert found
    for row in found:
        quoted = re.search(r"\u201c(.+?)\u201d", row["reason"])
        assert quoted, row["reason"]
        supporting = {c["chunk_id"] for c in row["evidence"]}
        quotes = [c["quote"] for c in row["candidates"] if c["chunk_id"] in supporting]
        assert quoted.group(1) in quotes, (row["reason"], quotes)
        # The quote is the passage's own words, markup aside.
        (source,) = [c for c in row["candidates"] if c["quote"] == quoted.group(1)][:1]
        first_words = " ".join(quoted.group(1).rstrip("\u2026").split()[:3])
        shown = " ".join(re.sub(r"[*_`#>|]+", " ", source["excerpt"]).split())
        assert first_words in shown or source["excerpt"].endswith("\u2026"), (first_words, shown)
        assert "ranks it" not in row["reason"] and "similarity" not in row["reason"]
