"""A policy that quotes the standard's control text in a block quote: the quote is the
standard's words, which match the requirement best of all, and never a practice of the
organisation's; the policy's own practices beside it still are. On two ISO/IEC 27001
policies of the isms-core project, ingested by the product."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import DocumentChunk
from tests.support.services import open_kit
from tests.support.shared_data import SHARED_DATA
from workers.analysis.sections import non_normative

POLICIES = SHARED_DATA / "evidence-iso27001" / "policies"
QUOTING = (
    "isms-op-confidentiality-and-non-disclosure-agreements.md",
    "isms-op-physical-access-control.md",
)
QUOTATION = "a quotation of another text (a standard's own words), not a practice"

pytestmark = [
    pytest.mark.realdata,
    pytest.mark.skipif(
        not all((POLICIES / name).is_file() for name in QUOTING),
        reason=f"the ISO/IEC 27001 policies are absent ({POLICIES})",
    ),
]


def test_the_quoted_control_text_is_a_quotation_and_the_practices_are_not(tmp_path: Path) -> None:
    with open_kit(tmp_path) as kit:
        for name in QUOTING:
            kit.add_document(name, (POLICIES / name).read_bytes())
        kit.run_step(Step.INGEST_DOCUMENTS)
        chunks = kit.session.scalars(select(DocumentChunk)).all()
    judged = [(c, non_normative(c.heading_path, c.text)) for c in chunks]
    quoted = [c for c, kind in judged if kind == QUOTATION]
    # Each policy sets the standard's text in italics in a block quote at least once.
    assert {c.document_id for c in quoted} == {c.document_id for c in chunks}
    for chunk in quoted:
        assert any(line.lstrip().startswith(">") for line in chunk.text.splitlines())
    # Most of what the policies say is their own practice, and stays so.
    practices = [c for c, kind in judged if kind is None]
    assert len(practices) > 4 * len(quoted)
    assert any("shall" in c.text for c in practices)
