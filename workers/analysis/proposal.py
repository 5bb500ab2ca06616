"""A proposed evidence status for a requirement or control, always with its reason.

The proposal is what a reviewer starts from, never a decision: people set the assessed
status. It answers whether this corpus addresses this requirement, not which passage
ranks first (some passage always does). A passage is evidence for one of the
requirement's SCF controls only when it is *specifically* about that control: among the
whole catalogue, it ranks that control among its own closest few, by words and by
meaning alike (the reverse check); it is on the control's subject (an absolute similarity); it
states a practice (not a purpose, scope, references or definitions section); and its
document was adopted (not a template or a blank form).

- `evidence_found`: specific passages for at least two of the requirement's SCF control
  families and a third of them (the only one, when it links to one): a single family of
  a broad requirement is a part of it, not the requirement.
- `weak_evidence`: some, but fewer, specific passages; or passages close to its controls
  that are specifically about something else.
- `template_not_adopted`: only set-aside documents (templates, blank forms) address it.
- `no_evidence_found`: nothing adopted is on the subject.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from orchestrator.knowledge.hybrid import Ranked
from workers.analysis.catalog_ranks import family

SPECIFIC_RANK = (3, 5)
"""A passage is specifically about a control family when one ranking puts the family among
the passage's own closest 3 of the whole catalogue and the other among its closest 5."""
RELATED_RANK = (5, 30)
"""Within 5 by one ranking and 30 by the other, the passage is close to the family;
one method alone (a shared word, a vague likeness) is not enough."""
FAMILIES_NEEDED = 2
ON_TOPIC = 0.30
"""MiniLM cosine from which a passage is on a control's subject at all (unrelated policy
text scores 0.0-0.25 against a control; a passage on its topic 0.35 and up)."""
#: Each embedder's own on-topic cosine: the hashing embedder's cosines are lower (shared
#: stemmed words only).
SCALES = {
    "minilm-l6-v2-onnx": ON_TOPIC,
    "minilm-l6-v2-numpy": ON_TOPIC,
    "sentence-all-MiniLM-L6-v2": ON_TOPIC,
    "hashing-blake2b-v1": 0.18,
}


def on_topic_for(model: str) -> float:
    return SCALES.get(model, ON_TOPIC)


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
class Checked:
    """One candidate passage with the outcome of each test."""

    hit: Ranked
    specific: tuple[str, ...] = ()  # the requirement's control families it is specifically about
    related: tuple[str, ...] = ()  # the requirement's control families it is close to
    section: str | None = None  # the non-normative section it is, if any
    set_aside: str | None = None  # why its document does not count (a template, a form)
    about: str | None = None  # the catalogue family it is most about
    #: For the closest of the requirement's families: (family, rank by meaning, by words)
    closest: tuple[str, int, int] | None = None
    quote: str = ""  # the passage's sentence closest to the requirement, for its reason

    @property
    def counts(self) -> bool:
        return self.section is None and self.set_aside is None

    def verdict(self) -> str:
        """The passage's own outcome, in words, for its citation."""
        if self.set_aside:
            return f"set aside: {self.set_aside}"
        if self.section:
            return f"not evidence on its own: {self.section}"
        if self.specific:
            return f"specifically about {', '.join(self.specific)}"
        if self.related and self.closest:
            return f"close to {self.closest[0]}, not specifically about it"
        return f"not specific to this requirement (most about {self.about})"


@dataclass(frozen=True)
class Judged:
    proposal: Proposal
    reason: str
    evidence: list[Ranked]  # what the proposal rests on, best first
    candidates: list[Checked]  # the evidence list a reviewer reads: up to 10 documents
    templates: list[Ranked] = field(default_factory=list)  # passages of set-aside documents
    families: tuple[int, int] = (0, 0)  # (specifically addressed, linked) control families


def proposal_counts(rows: list[dict[str, object]], framework: str | None = None) -> dict[str, int]:
    """How many applicable rows (of one framework) each proposal has: abstention shown."""
    chosen = [r for r in rows if framework is None or r.get("framework") == framework]
    counts = Counter(str(r.get("proposal")) for r in chosen if r.get("proposal"))
    return {"requirements": len(chosen), **{p.value: counts[p.value] for p in Proposal}}


def propose(
    checked: Sequence[Checked],
    control_ids: Sequence[str],
    name: Callable[[str], str],
    templates: Sequence[Checked] = (),
) -> Judged:
    """The proposal from the checked passages of the requirement's pool, best first."""
    candidates = list(checked)
    families = sorted({family(c) for c in control_ids})
    counted = [c for c in candidates if c.counts]
    specific = [c for c in counted if c.specific]
    addressed = sorted({f for c in specific for f in c.specific})
    needed = max(min(FAMILIES_NEEDED, len(families)), math.ceil(len(families) / 3))
    tally = (len(addressed), len(families))
    set_aside = [t.hit for t in templates]

    def judged(proposal: Proposal, reason: str, evidence: Sequence[Checked] = ()) -> Judged:
        return Judged(proposal, reason, [c.hit for c in evidence], candidates, set_aside, tally)

    if addressed and len(addressed) >= needed:
        support = _one_per_family(specific)
        missing = [f for f in families if f not in addressed]
        rest = f"; nothing states a practice for {_titled(missing, name)}" if missing else ""
        return judged(
            Proposal.EVIDENCE_FOUND,
            f"{_cited(support, name)}. {_share(addressed, families)} addressed{rest}",
            support,
        )
    if specific:
        support = _one_per_family(specific)
        missing = [f for f in families if f not in addressed]
        return judged(
            Proposal.WEAK_EVIDENCE,
            f"only part of it is addressed: {_cited(support, name)}. Nothing states a "
            f"practice for {_titled(missing, name)} ({_share(addressed, families)} addressed)",
            support,
        )
    related = [c for c in counted if c.related]
    if related:
        best = related[0]
        assert best.closest is not None
        return judged(
            Proposal.WEAK_EVIDENCE,
            f"related passages only: {_quoted(best)} is near {_titled([best.closest[0]], name)} "
            f"but is mostly about {_control(best.about, name)}; no passage states a practice "
            f"for {_titled(families, name)} itself",
            related[:3],
        )
    useful = [t for t in templates if t.specific or t.related]
    if useful:
        first = useful[0]
        return judged(
            Proposal.TEMPLATE_NOT_ADOPTED,
            f"only a document that is not adopted addresses it: {_quoted(first)} "
            f"({first.set_aside}); a draft or template is not evidence until the "
            "organisation adopts it",
        )
    boiler = [c for c in candidates if c.section and (c.specific or c.related)]
    return judged(Proposal.NO_EVIDENCE_FOUND, _nothing(candidates, boiler, families, name))


def _nothing(
    candidates: list[Checked],
    boiler: list[Checked],
    families: list[str],
    name: Callable[[str], str],
) -> str:
    wanted = f"no adopted document states a practice for {_titled(families, name)}"
    if boiler:
        first = boiler[0]
        return (
            f"{wanted}; the closest is {_where(first.hit)}, {first.section}, which does not "
            "count on its own"
        )
    if candidates:
        first = candidates[0]
        about = _control(first.about, name)
        return f"{wanted}; the closest passage, {_quoted(first)}, is about {about}"
    return f"{wanted}; no uploaded passage is on its subject"


def _one_per_family(specific: list[Checked]) -> list[Checked]:
    """The best passage for each family first, then the others: a reader sees breadth."""
    seen: set[str] = set()
    first: list[Checked] = []
    rest: list[Checked] = []
    for c in specific:
        new = set(c.specific) - seen
        (first if new else rest).append(c)
        seen |= new
    return (first + rest)[:10]


def _share(addressed: list[str], families: list[str]) -> str:
    total = len(families)
    noun = "family" if total == 1 else "families"
    return f"{len(addressed)} of its {total} SCF control {noun} ({', '.join(addressed)})"


def _cited(support: list[Checked], name: Callable[[str], str]) -> str:
    """What the supporting passages say, in their words, and which practice each states."""
    shown = [f"{_quoted(c)} states {_titled(list(c.specific), name)}" for c in support[:2]]
    more = len(support) - len(shown)
    return "; ".join(shown) + (f"; and {more} more passages" if more > 0 else "")


def _quoted(checked: Checked) -> str:
    where = _where(checked.hit)
    return f"{where}: \u201c{checked.quote}\u201d" if checked.quote else where


def _titled(families: list[str], name: Callable[[str], str]) -> str:
    named = [f"{f} {name(f)}".strip() for f in families]
    return _list(named)


def _control(control_id: str | None, name: Callable[[str], str]) -> str:
    if not control_id:
        return "another subject"
    title = name(control_id)
    return f"{control_id} {title}" if title else control_id


def _list(items: list[str]) -> str:
    if len(items) > 4:
        return ", ".join(items[:4]) + f" and {len(items) - 4} more"
    return ", ".join(items)


def _where(hit: Ranked) -> str:
    p = hit.passage
    where = f"{p.filename} § {p.heading_path}" if p.heading_path else p.filename
    if p.page_start is not None:
        where += f" (p. {p.page_start})"
    return where
