"""A gap written as an auditor writes a finding: condition (the passage it rests on,
quoted, or what was looked for and not found), criteria (the SCF control text, verbatim),
cause, effect and recommendation. Cause, effect and recommendation are proposals a reviewer
edits; each is drawn from the requirement's own linked controls (their statement, control
question and generic methods to comply) and from what the documents showed, so two
requirements with different controls or evidence never share one. The SCF text quoted is
attributed; no vendor product or URL is ever recommended (workers.analysis.method_steps)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from orchestrator.catalog.model import CatalogControl, LoadedCatalog
from workers.analysis.method_steps import evidence_artifacts, generic_methods
from workers.analysis.proposal import AssessedStatus, Proposal

CRITERIA_SHOWN = 3
QUOTED = 2  # passages a condition quotes
METHODS_SHOWN = 3
ATTRIBUTION = "Secure Controls Framework (SCF), CC BY-ND 4.0"
#: A document judged drafted but not adopted (unfilled approval, date or owner fields).
DRAFTED = "drafted, not adopted"
_SCF_ID = re.compile(r"\b[A-Z]{3}-\d{2}(?:\.\d+)?\b")
_QUESTION = re.compile(r"^Does the organi[sz]ation\s+(.+)$", re.I)
_HOUSE_STYLE = re.compile(r"^(?:Mechanisms exist to|Automated mechanisms exist to)\s+", re.I)

Row = dict[str, Any]


@dataclass(frozen=True)
class Evidence:
    """What the finding's rows showed: the passages they rest on and the documents'
    judgements (kind, adoption), by file name."""

    rows: Sequence[Row]
    passages: int
    documents: dict[str, Row]

    @property
    def lead(self) -> Row:
        return self.rows[0]

    @property
    def supporting(self) -> list[Row]:
        found = [c for r in self.rows for c in r.get("candidates") or [] if c.get("supports")]
        if found:
            return found
        # Cited passages beyond the listed candidates carry no quote of their own: the
        # row's reason quotes the sentence it rests on, per document.
        return [
            c if c.get("quote") else c | _reason_quote(r, c)
            for r in self.rows
            for c in r.get("evidence") or []
        ]

    @property
    def closest(self) -> Row | None:
        """The passage a condition quotes first: a supporting one, else the best listed."""
        listed = self.supporting or [c for r in self.rows for c in r.get("candidates") or []]
        return listed[0] if listed else None

    @property
    def templated(self) -> bool:
        """The proposal rests on documents set aside as not adopted (a draft or a template),
        not on passages that merely ranked near the requirement from such a document."""
        return str(self.lead.get("proposal")) == Proposal.TEMPLATE_NOT_ADOPTED.value

    @property
    def set_aside(self) -> list[Row]:
        """The judgements of the documents whose passages were set aside as not adopted."""
        names = {str(t.get("document")) for r in self.rows for t in r.get("template_passages", [])}
        return [self.documents.get(n) or {"filename": n} for n in sorted(names)]

    def on_subject(self, controls: Sequence[CatalogControl]) -> list[str]:
        """Documents with a supporting passage about (or near) one of `controls`: the ones
        to extend, rather than any document that merely ranked."""
        ids = {c.id for c in controls}
        return sorted(
            {
                str(c.get("document"))
                for c in self.supporting
                if ids & set(_SCF_ID.findall(str(c.get("verdict") or "")))
            }
        )

    def addressed(self) -> set[str]:
        """SCF controls a supporting passage is specifically about."""
        found: set[str] = set()
        for cite in self.supporting:
            verdict = str(cite.get("verdict") or "")
            if verdict.startswith("specifically about"):
                found.update(_SCF_ID.findall(verdict))
        return found


def criteria(controls: Sequence[CatalogControl], label: str) -> str:
    if not controls:
        return f"no SCF control in scope is linked to {label}"
    text = " ".join(f"SCF {c.id} {c.title}: {c.description}" for c in controls[:CRITERIA_SHOWN])
    if len(controls) > CRITERIA_SHOWN:
        text += f" (and {len(controls) - CRITERIA_SHOWN} more linked SCF controls)"
    return text


def missing(controls: Sequence[CatalogControl], evidence: Evidence) -> list[CatalogControl]:
    """The linked controls no passage is specifically about, in their order."""
    addressed = evidence.addressed()
    return [c for c in controls if c.id not in addressed] or list(controls)


def condition(controls: Sequence[CatalogControl], evidence: Evidence, sub_items: list[str]) -> str:
    """What was observed: the passages quoted with what they are about, the documents set
    aside (as their judgement says: a draft or an unfilled template), or what was looked
    for and not found."""
    lead = evidence.lead
    assessed = lead.get("assessed_status")
    parts = [f"A reviewer assessed it as {str(assessed).replace('_', ' ')}."] if assessed else []
    if sub_items:
        parts.append(f"Sub-items without evidence: {', '.join(sub_items)}.")
    if not controls:
        parts.append("No SCF control in scope links to it, so no documentation was sought.")
        return " ".join(parts)
    gaps = missing(controls, evidence)
    state = str(lead.get("proposal") or "")
    set_aside = evidence.set_aside
    supporting = evidence.supporting
    if set_aside and evidence.templated:
        parts.append(_set_aside(set_aside, gaps))
    elif supporting:
        quoted = "; ".join(_quoted(c) for c in supporting[:QUOTED])
        if state == Proposal.EVIDENCE_FOUND.value:
            parts.append(f"The documents address it: {quoted}.")
        else:
            parts.append(
                f"The passages closest to it: {quoted}. No passage states a practice for "
                f"{_names(gaps)}."
            )
    else:
        parts.append(_not_found(gaps, evidence))
    return " ".join(parts)


def cause(controls: Sequence[CatalogControl], evidence: Evidence, title: str) -> str:
    lead = evidence.lead
    assessed = lead.get("assessed_status")
    gaps = missing(controls, evidence)
    subject = _names(gaps) if gaps else (title or "the requirement")
    if assessed == AssessedStatus.NOT_IMPLEMENTED.value:
        return (
            f"Assessed as not implemented by a reviewer: {subject} is not in operation; "
            "why is to be confirmed with the owner."
        )
    if assessed == AssessedStatus.PARTIALLY_IMPLEMENTED.value:
        return (
            f"Assessed as partially implemented by a reviewer; {subject} is the part to "
            "confirm with the owner."
        )
    if not controls:
        return "The SCF crosswalk links no in-scope control to the requirement."
    proposed = " (proposed; to be confirmed with the owner)"
    set_aside = evidence.set_aside
    if set_aside and evidence.templated:
        drafts = [d for d in set_aside if _is_draft(d)]
        if drafts:
            names = ", ".join(str(d.get("filename")) for d in drafts)
            return (
                f"The documentation of {subject} ({names}) was drafted but never approved and "
                f"issued, so it is not yet the organisation's practice{proposed}."
            )
        return f"A template for {subject} was provided but never completed and adopted{proposed}."
    addressed = [c for c in controls if c.id in evidence.addressed()]
    documents = evidence.on_subject(controls)
    if addressed:
        verb = "are" if len(gaps) > 1 else "is"
        return (
            f"{', '.join(documents)} set out {_names(addressed)} but stop there: {subject} "
            f"{verb} not written down as a practice with an owner, a frequency and "
            f"records{proposed}."
        )
    closest = evidence.closest
    if closest is not None:
        about = _about(closest)
        return (
            f"No document sets out {subject}: the nearest text, in {closest.get('document')}, "
            f"is {about}, so the practice may not be defined, or its documentation was not "
            f"part of this assessment{proposed}."
        )
    return (
        f"No policy, standard or procedure for {subject} was provided: the practice may not "
        f"be defined, or its documentation was not part of this assessment{proposed}."
    )


def effect(controls: Sequence[CatalogControl], evidence: Evidence, label: str) -> str:
    gaps = missing(controls, evidence)
    base = f"The assessment cannot conclude that {label} is met"
    if not gaps:
        return base + "."
    aims = "; nor that it is able to ".join(_aim(c) for c in gaps[:2])
    return (
        f"{base}: nothing shows that the organisation is able to {aims} "
        f"(SCF {', '.join(c.id for c in gaps[:2])}; {ATTRIBUTION})."
    )


def recommendation_steps(
    controls: Sequence[CatalogControl], evidence: Evidence, catalog: LoadedCatalog
) -> list[str]:
    """What to do, in order: each a milestone of the POA&M."""
    if not controls:
        return ["Review the requirement's mapping to SCF controls and record how it is met"]
    gaps = missing(controls, evidence)
    lead = gaps[0]
    steps: list[str] = []
    set_aside = evidence.set_aside if evidence.templated else []
    for document in set_aside:
        name = str(document.get("filename"))
        unfilled = [str(f) for f in document.get("unfilled_fields") or []][:4]
        if _is_draft(document):
            fill = f" (its {', '.join(unfilled)})" if unfilled else ""
            steps.append(f"Complete the unfilled fields of {name}{fill}, approve and issue it")
        else:
            steps.append(f"Replace the template {name} with the organisation's own practice")
    documents = evidence.on_subject(controls)
    where = f"extend {', '.join(documents)} to state" if documents else "write and approve"
    verb = "" if documents else " a policy or procedure stating"
    steps.append(
        f"{where.capitalize()}{verb} how the organisation will {_aim(lead)} (SCF {lead.id}): "
        "who does it, how often, and what record it leaves"
    )
    for other in gaps[1:CRITERIA_SHOWN]:
        asked = _flat(other.details.get("question"))
        steps.append(f"Cover SCF {other.id} {other.title}" + (f": {asked}" if asked else ""))
    methods = list(dict.fromkeys(m for c in gaps[:2] for m in generic_methods(catalog, c)))
    methods = methods[:METHODS_SHOWN]
    if methods:
        steps.append(
            f"Choose how it is carried out, e.g. {', '.join(methods)} (SCF methods to comply)"
        )
    artifacts = [a for c in gaps[:2] for a in evidence_artifacts(catalog, c.id)][:3]
    records = ", ".join(artifacts) if artifacts else f"records that {lead.title} operates"
    steps.append(
        f"Name its owner and review frequency, keep {records}, and upload them for the next "
        "evidence analysis"
    )
    return steps


def recommendation(steps: Sequence[str]) -> str:
    text = " ".join(f"{n}. {s}." for n, s in enumerate(steps, 1))
    return text + (f" ({ATTRIBUTION})" if "SCF" in text else "")


def _set_aside(documents: list[Row], gaps: Sequence[CatalogControl]) -> str:
    """The set-aside documents as their own judgement calls them: a draft never approved,
    or an unfilled template."""
    said: list[str] = []
    for document in documents:
        name = str(document.get("filename"))
        basis = str(document.get("adoption_basis") or "").strip().rstrip(".")
        if _is_draft(document):
            said.append(f"{name} is a draft, not adopted ({basis})")
        elif document.get("adoption") == "adopted":
            said.append(f"passages of {name} still hold placeholders")
        else:
            said.append(f"{name} is an unfilled template" + (f" ({basis})" if basis else ""))
    return (
        f"The only documentation on {_names(gaps)} was set aside: {'; '.join(said)}. It does "
        "not describe this organisation's adopted practice."
    )


def _not_found(gaps: Sequence[CatalogControl], evidence: Evidence) -> str:
    questions = [_flat(c.details.get("question")) for c in gaps[:2]]
    asked = " / ".join(f"“{q}”" for q in questions if q) or _names(gaps)
    adopted = [d for d in evidence.documents.values() if d.get("adoption") == "adopted"]
    text = (
        f"Looked for, in the {evidence.passages} passages of the {len(adopted)} adopted "
        f"documents: a practice answering {asked} (SCF {', '.join(c.id for c in gaps[:2])}). "
        "None states one"
    )
    closest = evidence.closest
    if closest is not None and closest.get("quote"):
        text += f"; the closest passage, {_quoted(closest)}, is {_about(closest)}"
    return text + "."


#: "classification.md § Policy: “The sentence.”" as reasons write a quoted passage.
_REASON_QUOTE = re.compile(r"(\S+) § ([^“”]+?): “([^”]+)”")


def _reason_quote(row: Row, citation: Row) -> Row:
    """The sentence the row's reason quotes from the citation's document, if it does."""
    for document, heading, sentence in _REASON_QUOTE.findall(str(row.get("reason") or "")):
        if document == citation.get("document"):
            return {"quote": sentence, "heading_path": heading.strip()}
    return {}


def _quoted(citation: Row) -> str:
    text = str(citation.get("quote") or "").strip() or _excerpt(citation)
    where = [str(citation.get("document"))]
    if citation.get("heading_path"):
        where.append(f"§ {citation['heading_path']}")
    pages = citation.get("pages") or []
    if pages:
        where.append("p. " + "-".join(str(p) for p in pages))
    verdict = str(citation.get("verdict") or "")
    said = f": {verdict}" if verdict else ""
    return f"“{text}” ({', '.join(where)}{said})"


def _excerpt(citation: Row) -> str:
    excerpt = " ".join(str(citation.get("excerpt") or "").split())
    return excerpt[:220].rsplit(" ", 1)[0] + "…" if len(excerpt) > 220 else excerpt


def _about(citation: Row) -> str:
    verdict = str(citation.get("verdict") or "")
    if verdict.startswith("not specific to this requirement"):
        found = _SCF_ID.findall(verdict)
        return f"about {found[0]} instead" if found else "not specific to it"
    if verdict.startswith("specifically about"):
        return verdict.replace("specifically about", "about", 1)
    if verdict.startswith("close to"):
        return verdict.replace("close to", "near", 1)
    return verdict or "not specific to it"


def _is_draft(document: Row) -> bool:
    return str(document.get("adoption_basis") or "").startswith(DRAFTED)


def _names(controls: Sequence[CatalogControl]) -> str:
    shown = ", ".join(f"{c.id} {c.title}" for c in controls[:CRITERIA_SHOWN])
    more = len(controls) - CRITERIA_SHOWN
    return shown + (f" and {more} more" if more > 0 else "") if shown else "its subject"


def _aim(control: CatalogControl) -> str:
    """What the organisation does, in the control's words: its question "Does the
    organization X?" or its statement "Mechanisms exist to X." -> X."""
    asked = _QUESTION.match(_flat(control.details.get("question")))
    if asked:
        return asked.group(1).rstrip("?").strip()
    text = _HOUSE_STYLE.sub("", _flat(control.description)).rstrip(".")
    return (text[:1].lower() + text[1:]) if text else control.title.lower()


def _flat(text: Any, longest: int = 240) -> str:
    """Catalogue text on one line (its bullet lists joined), cut at a word."""
    flat = " ".join(str(text or "").replace("▪", "").split())
    return flat[:longest].rsplit(" ", 1)[0] + "…" if len(flat) > longest else flat
