"""What a reviewer reads of a draft: abstention counted per framework in words, and each
document's kind and adoption beside the evidence."""

from __future__ import annotations

from orchestrator.console.draft_tables import summary, tables
from orchestrator.contracts.signals import ArtifactKind


def test_the_summary_counts_each_frameworks_proposals_in_words() -> None:
    content = {
        "summary": {
            "rows": 64,
            "frameworks": [
                {
                    "framework": "SOC 2",
                    "requirements": 64,
                    "evidence_found": 5,
                    "weak_evidence": 40,
                    "no_evidence_found": 19,
                    "template_not_adopted": 0,
                }
            ],
        }
    }
    lines = dict(summary(content))
    assert lines["rows"] == 64
    assert lines["SOC 2 proposals"] == (
        "5 evidence found, 40 weak evidence, 19 no evidence found, 0 template not adopted (of 64)"
    )


def test_the_evidence_analysis_shows_each_documents_kind_and_adoption() -> None:
    content = {
        "documents": [
            {
                "document_id": "d1",
                "filename": "log.md",
                "kind": "policy",
                "kind_basis": "normative statements under a policy title",
                "adoption": "adopted",
                "adoption_basis": "no prompts",
                "overridden_by": None,
                "override_reason": None,
            }
        ]
    }
    (documents,) = [t for t in tables(ArtifactKind.EVIDENCE_ANALYSIS, content) if t.keys]
    assert documents.title.startswith("Documents")
    row = documents.rows[0].row
    assert [row[c.field] for c in documents.spec.line[:2]] == ["log.md", "policy"]
    assert documents.keys == ["d1"]
