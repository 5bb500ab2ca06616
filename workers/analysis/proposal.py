"""A proposed evidence status for a requirement or control, always with its reason.

The proposal is what a reviewer starts from, never a decision: people set the assessed
status. No single similarity threshold decides it. A passage counts as evidence when both
retrieval methods independently rank it among their best for the requirement (the words
and the meaning agree) and it is on the requirement's topic; passages from unfilled
templates are set aside and never count.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from orchestrator.knowledge.hybrid import Ranked
from workers.analysis.templates import placeholders

AGREEMENT_RANK = 10
"""Both methods must place a passage within their first this many to corroborate it."""
ON_TOPIC = 0.30
"""MiniLM cosine from which a passage is about the subject at all (unrelated policy text
scores 0.0-0.25 against a control; a passage on the control's topic 0.35 and up)."""
CLEAR = 0.45
"""Cosine from which a corroborated passage speaks to the control directly."""
CITED = 5
#: Each embedder's own scale: (on topic, clear). The hashing embedder's cosines are lower
#: (shared stemmed words only): 0.18 is on the topic, 0.30 written about it.
SCALES = {
    "minilm-l6-v2-numpy": (ON_TOPIC, CLEAR),
    "sentence-all-MiniLM-L6-v2": (ON_TOPIC, CLEAR),
    "hashing-blake2b-v1": (0.18, 0.30),
}


def scale_for(model: str) -> tuple[float, float]:
    return SCALES.get(model, (ON_TOPIC, CLEAR))


class Proposal(StrEnum):
    EVIDENCE_FOUND = "evidence_found"
    WEAK_EVIDENCE = "weak_evidence"
    NO_EVIDENCE_FOUND = "no_evidence_found"
    TEMPLATE_NOT_ADOPTED = "template_not_adopted"


class AssessedStatus(StrEnum):
    """What a person records; the system never sets it."""

    IMPLEMENTED = "implemented"
    PARTIALLY_IMPLEMENTED = "partially_implemented"
    NOT_IMPLEMENTED = "not_implemented"
    NOT_APPLICABLE = "not_applicable"


@dataclass(frozen=True)
class Judged:
    proposal: Proposal
    reason: str
    evidence: list[Ranked]  # adopted passages that support the proposal, best first
    templates: list[Ranked]  # passages set aside as unfilled templates


def corroborated(hit: Ranked) -> bool:
    return (
        hit.lexical_rank is not None
        and hit.lexical_rank <= AGREEMENT_RANK
        and hit.dense_rank <= AGREEMENT_RANK
    )


def propose(ranked: Sequence[Ranked], scale: tuple[float, float] = (ON_TOPIC, CLEAR)) -> Judged:
    topic, clear = scale
    templates = [h for h in ranked if placeholders(h.passage.text)]
    adopted = [h for h in ranked if not placeholders(h.passage.text)]
    on_topic = [h for h in adopted if h.similarity >= topic]
    strong = [h for h in on_topic if corroborated(h) and h.similarity >= clear]
    if strong:
        best = strong[0]
        return Judged(
            Proposal.EVIDENCE_FOUND,
            f"{len(strong)} passage(s) that both lexical and semantic retrieval rank "
            f"among their top {AGREEMENT_RANK}; best: {_where(best)} "
            f"(similarity {best.similarity:.2f})",
            strong[:CITED],
            templates,
        )
    template_topic = [h for h in templates if h.similarity >= topic]
    if template_topic and not on_topic:
        first = template_topic[0]
        marks = ", ".join(placeholders(first.passage.text)[:3])
        return Judged(
            Proposal.TEMPLATE_NOT_ADOPTED,
            f"the only passages on this subject are from unfilled templates "
            f"({_where(first)} still has {marks}); a template is not evidence "
            "until the organisation adopts it",
            [],
            templates,
        )
    if on_topic:
        best = on_topic[0]
        why = (
            "only one retrieval method ranks it high"
            if not corroborated(best)
            else "it touches the subject without addressing it directly"
        )
        return Judged(
            Proposal.WEAK_EVIDENCE,
            f"related passages found but {why}; best: {_where(best)} "
            f"(similarity {best.similarity:.2f})",
            on_topic[:CITED],
            templates,
        )
    return Judged(
        Proposal.NO_EVIDENCE_FOUND,
        "no uploaded passage is on this subject (none reaches similarity "
        f"{topic:.2f} to the control's own text)",
        [],
        templates,
    )


def _where(hit: Ranked) -> str:
    p = hit.passage
    return f"{p.filename} § {p.heading_path}" if p.heading_path else p.filename
