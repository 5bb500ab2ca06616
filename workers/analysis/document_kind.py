"""What kind of document this is, from its text and structure, never from its file name.

Policies, standards, procedures and plans prescribe a practice; records show it operating
(a log export, a ticket, a report of a test, a data export, measurements). Maturity reads
the difference: documents that prescribe cap a control at level 2.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

#: What a record is, when it is one.
RECORD_TYPES = ("log", "ticket", "test report", "data export", "metrics", "image")

# A date with a time of day, as log lines start (ingestion may join a log's lines).
_TIMESTAMP = re.compile(
    r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?|\b\d{2}/\d{2}/\d{4} \d{2}:\d{2}"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +\d{1,2} \d{2}:\d{2}:\d{2}\b"
)
_TICKET_FIELD = re.compile(
    r"(?:^|[\s|;])(status|assignee|assigned to|reporter|created|updated|resolved|resolution"
    r"|priority|issue type|labels|due date|opened by|closed)\s*[:|]",
    re.IGNORECASE | re.MULTILINE,
)
# What a report of a test records: outcomes, and when and by whom it was run.
_OUTCOME = re.compile(
    r"\b(?:PASS(?:ED)?|FAIL(?:ED)?|Pass(?:ed)?|Fail(?:ed)?|no exceptions noted"
    r"|exceptions? noted|not met|met|compliant|non-compliant|finding \d+)\b"
)
_EXECUTED = re.compile(
    r"\b(?:date (?:executed|performed|tested|of test)|test(?:ed)? (?:date|on|by)"
    r"|executed (?:on|by)|performed (?:on|by)|tester|test results?)\s*[:|]",
    re.IGNORECASE,
)
_DATE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}/\d{2,4}\b"
    r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2},? \d{4}\b"
)
# Rows of a spreadsheet or CSV as ingestion renders them: "Header: value; Header: value".
_DATA_PAIR = re.compile(r"(?:^|; )[^:;\n]{1,40}: [^;\n]{0,80}(?=; )", re.MULTILINE)
_MEASURE = re.compile(
    r"\b(?:\d+(?:\.\d+)?\s?%|kpis?|metrics?|mean time|mttr|mttd|target|actual|trend"
    r"|average|median|per month|per quarter)\b",
    re.IGNORECASE,
)
_NORMATIVE = re.compile(r"\b(must|shall|is required to|are required to|must not|shall not)\b", re.I)
_STEP = re.compile(r"^\s*(?:\d{1,2}[.)]|step \d+)\s+\S", re.IGNORECASE)
_IMPERATIVE = re.compile(
    r"^\s*(?:\d{1,2}[.)]|[-*]|step \d+[:.]?)\s+(?:\*\*)?(?:log in|open|select|click|run"
    r"|create|review|verify|confirm|notify|submit|record|update|ensure|check|go to"
    r"|navigate|enter|configure|install|remove|disable|enable|escalate|assign|document"
    r"|obtain|request|approve|send|contact|identify|determine|perform|complete|restore"
    r"|back up|test|schedule|close|file|report|collect|preserve|isolate|contain)\b",
    re.IGNORECASE | re.MULTILINE,
)
_PLAN = re.compile(
    r"\b(objectives?|phases?|recovery time objective|rto|rpo|activation|deactivation"
    r"|roles and responsibilities|escalation|contact list|alternate (?:work )?site"
    r"|milestones?|timeline|exercise|tabletop|communication plan|scenarios?|recovery)\b",
    re.IGNORECASE,
)
_TECHNICAL = re.compile(
    r"\b(?:\d+\s?(?:characters?|days?|minutes?|hours?|bits?|bytes|mb|gb)|aes[- ]?\d{3}"
    r"|tls \d(?:\.\d)?|sha-?\d{3}|rsa|fips 140|cis benchmark|baseline|configured|configuration"
    r"|minimum (?:length|of)|port \d+|encryption|algorithm|version \d)\b",
    re.IGNORECASE,
)
_TITLE_KIND = (
    ("plan", re.compile(r"\bplan\b|\bplaybook\b|\bssp\b", re.I)),
    ("procedure", re.compile(r"\bprocedures?\b|\bprocess\b|\brunbook\b|\bhow to\b", re.I)),
    ("standard", re.compile(r"\bstandards?\b|\bbaseline\b", re.I)),
    ("policy", re.compile(r"\bpolic(?:y|ies)\b", re.I)),
    ("record", re.compile(r"\b(?:report|minutes|log|register|results)\b", re.I)),
)
_SELF_REFERENCE = {
    kind: re.compile(rf"\bthis {word}\b", re.I)
    for kind, word in (
        ("policy", "policy"),
        ("standard", "standard"),
        ("procedure", "procedure"),
        ("plan", "plan"),
    )
}


@dataclass(frozen=True)
class Kind:
    kind: str
    basis: str
    record_type: str | None = None


def judge_kind(title: str, passages: Sequence[tuple[str, str]]) -> Kind:
    """The kind of a document from its title (the document's own, or its first heading)
    and its passages (heading path, text) in order."""
    text = "\n".join(body for _, body in passages)
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return Kind("record", "no text: an image, a scan or a screenshot", "image")
    record = _record(lines, text)
    if record is not None:
        return record
    headings = " ".join(dict.fromkeys(h for h, _ in passages if h))
    counts = {
        "normative": len(_NORMATIVE.findall(text)),
        "steps": sum(1 for line in lines if _STEP.match(line)),
        "imperative": len(_IMPERATIVE.findall(text)),
        "plan": len(_PLAN.findall(text + " " + headings)),
        "technical": len(_TECHNICAL.findall(text)),
    }
    per_100 = {key: 100 * value / len(lines) for key, value in counts.items()}
    named = next((kind for kind, pattern in _TITLE_KIND if title and pattern.search(title)), None)
    if named is not None and named != "record":
        return Kind(named, f'its title "{title}" names it a {named}; {_figures(counts)}')
    selves = {kind: len(p.findall(text)) for kind, p in _SELF_REFERENCE.items()}
    said = max(selves, key=lambda k: selves[k])
    if selves[said] >= 2:
        return Kind(
            said, f'the text calls itself "this {said}" {selves[said]} times; {_figures(counts)}'
        )
    if per_100["plan"] >= 8 and counts["plan"] >= 6:
        return Kind(
            "plan",
            f"plan structure (objectives, roles, phases, recovery: "
            f"{counts['plan']} mentions); {_figures(counts)}",
        )
    if counts["imperative"] >= 3 and per_100["steps"] + per_100["imperative"] >= 15:
        return Kind(
            "procedure",
            f"numbered or imperative steps ({counts['steps']} numbered, "
            f"{counts['imperative']} imperative); {_figures(counts)}",
        )
    if counts["technical"] >= 4 and per_100["technical"] >= 8 and counts["normative"]:
        return Kind(
            "standard",
            f"specific technical requirements ({counts['technical']} "
            f"settings or values); {_figures(counts)}",
        )
    if counts["normative"]:
        return Kind(
            "policy",
            f"normative statements (must/shall) without steps or a plan's "
            f"structure; {_figures(counts)}",
        )
    return Kind(
        "procedure",
        f"describes how the practice is carried out, with no normative "
        f"statements; {_figures(counts)}",
    )


def _figures(counts: dict[str, int]) -> str:
    return (
        f"{counts['normative']} must/shall, {counts['steps']} numbered steps, "
        f"{counts['imperative']} imperative steps"
    )


def _record(lines: list[str], text: str) -> Kind | None:
    words = max(len(text.split()), 1)
    stamped = len(_TIMESTAMP.findall(text))
    # Log lines are short, each with its timestamp; a policy's revision table has a few.
    if stamped >= 5 and stamped * 100 / words >= 4:
        return Kind(
            "record",
            f"a log export: {stamped} timestamped entries in {words} words",
            "log",
        )
    pairs = len(_DATA_PAIR.findall(text))
    if pairs >= 6 and pairs * 100 / words >= 8:
        measures = len(_MEASURE.findall(text))
        if measures * 2 >= pairs:
            return Kind(
                "record",
                f"measurements: rows of named values ({pairs} fields) with {measures} "
                "figures, targets or percentages",
                "metrics",
            )
        return Kind(
            "record",
            f"a data export: rows of named values ({pairs} fields), as a spreadsheet or CSV",
            "data export",
        )
    fields = {m.group(1).lower() for m in _TICKET_FIELD.finditer(text)}
    people = fields & {"assignee", "assigned to", "reporter", "opened by"}
    if len(fields) >= 3 and "status" in fields and people:
        return Kind("record", f"a ticket: it has {', '.join(sorted(fields))} fields", "ticket")
    outcomes = len(_OUTCOME.findall(text))
    executed = len(_EXECUTED.findall(text))
    dates = len(_DATE.findall(text))
    if executed and dates and outcomes >= 3:
        return Kind(
            "record",
            f"a report of a test: when and by whom it ran ({dates} dates) and "
            f"{outcomes} outcomes (pass/fail, findings)",
            "test report",
        )
    return None
