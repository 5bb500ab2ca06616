"""Documents whose passages never count as evidence, with the reason in words: templates
and blank forms, as judged from their content or as a reviewer set them."""

from __future__ import annotations

from collections.abc import Mapping

from workers.analysis.document_judgement import DocumentJudgement


def set_aside_documents(judged: Mapping[str, DocumentJudgement]) -> dict[str, str]:
    """{document id: why it is set aside} for every document not adopted."""
    return {
        document_id: _why(judgement)
        for document_id, judgement in judged.items()
        if not judgement.adopted
    }


def _why(judgement: DocumentJudgement) -> str:
    if judgement.overridden_by:
        return f"a reviewer marked it not adopted ({judgement.override_reason})"
    return f"the document is not adopted: {judgement.adoption_basis}"
