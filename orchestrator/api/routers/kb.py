"""HTTP: search an assessment's knowledge base, and read how its documents were ingested."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query
from pydantic import BaseModel

from orchestrator.api.auth import Reader
from orchestrator.api.paths import AssessmentId
from orchestrator.api.problems import problem_responses
from orchestrator.contracts.text import NOT_BLANK, Text
from orchestrator.service.document_outcomes import DocumentOutcomeView, list_outcomes
from orchestrator.service.kb_search import MAX_K, MAX_QUERY_CHARS, search_kb

router = APIRouter(
    prefix="/api/v1/assessments",
    tags=["knowledge base"],
    responses=problem_responses(401, 403, 404, 422),
)


class SearchResult(BaseModel):
    chunk_id: str
    document_id: str
    filename: str
    heading_path: str
    excerpt: str
    score: float
    page_start: int | None = None
    page_end: int | None = None


@router.get(
    "/{assessmentId}/kb/search",
    response_model=list[SearchResult],
    summary="Search the assessment's knowledge base",
)
def kb_search(
    assessment_id: AssessmentId,
    principal: Reader,
    q: Annotated[Text, Query(min_length=1, max_length=MAX_QUERY_CHARS, pattern=NOT_BLANK)],
    k: Annotated[int, Query(ge=1, le=MAX_K)] = 5,
    evidence_only: bool = False,
) -> list[dict[str, Any]]:
    hits = search_kb(principal.actor, assessment_id, q, k, evidence_only=evidence_only)
    return [hit.as_dict() for hit in hits]


@router.get(
    "/{assessmentId}/documents/outcomes",
    response_model=list[DocumentOutcomeView],
    summary="How each document was ingested (counts, or the typed reason)",
)
def outcomes(assessment_id: AssessmentId, principal: Reader) -> list[DocumentOutcomeView]:
    return list_outcomes(principal.actor, assessment_id)
