"""KB search for callers outside a job (the API): tenant-scoped, validated, read-only."""

from __future__ import annotations

import uuid

from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction
from orchestrator.knowledge.vectors import SearchHit, search
from orchestrator.service.producer import load_assessment

MAX_QUERY_CHARS = 1000
MAX_K = 50


@retry_busy
def search_kb(
    actor: Actor, assessment_id: uuid.UUID, query: str, k: int = 5, *, evidence_only: bool = False
) -> list[SearchHit]:
    """The `k` chunks of the assessment's KB most similar to `query`, best first, each
    with its document, heading path, pages and score. Another tenant's assessment is
    NotFound."""
    query = " ".join(query.split())
    if not query:
        raise InvalidInput("the search query is empty")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidInput(f"the search query is longer than {MAX_QUERY_CHARS} characters")
    if not 1 <= k <= MAX_K:
        raise InvalidInput(f"k must be between 1 and {MAX_K}")
    with read_transaction() as session:
        load_assessment(session, actor, assessment_id)
        return search(session, assessment_id, query, k, evidence_only=evidence_only)
