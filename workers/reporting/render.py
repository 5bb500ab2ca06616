"""The assessment report as one standalone HTML page: contents, sections, the sign-off of
its inputs and the catalogues it rests on with their attribution, and the rows and figures
every rendering of the report shares. The page is drawn by the jinja2 templates in
templates/ (autoescaped: every value is escaped)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from orchestrator.db.compute_guard import computing
from orchestrator.service.row_decisions import decision_lines, row_decision_labels
from orchestrator.service.soa_basis import LEGAL, REQUIRED_BY, RISK_TREATMENT, risks_named
from workers.analysis.dismissals import dismissed_gaps, open_gaps
from workers.analysis.poam import point_of_contact
from workers.reporting.chart_layout import layout
from workers.reporting.charts import maturity_chart, status_chart
from workers.reporting.conclusion_check import conclusion_warning
from workers.reporting.figures import Figures, figures
from workers.reporting.findings_summary import (
    BRIEF_HEADERS,
    FAMILY_HEADERS,
    brief_rows,
    family_rows,
)
from workers.reporting.report_templates import TEMPLATES
from workers.reporting.soa_summary import (
    SUMMARY_HEADERS,
    family_summary_rows,
    summarised,
    summary_note,
)
from workers.soa_content import soa_rows

Content = dict[str, Any]

SECTIONS: tuple[tuple[str, str], ...] = (
    ("summary", "Summary"),
    ("statement", "Assessor's statement"),
    ("signoff", "Sign-off"),
    ("scope", "Scope"),
    ("soa", "Statement of Applicability"),
    ("gaps", "Gaps"),
    ("maturity", "Maturity by domain"),
    ("poam", "Plan of Action & Milestones"),
    ("evidence", "Evidence citations"),
    ("catalogues", "Catalogues and attribution"),
    ("findings", "Appendix: each finding in full"),
)

#: The colour a sign-off row of an input nobody approved is shown in (HTML and PDF).
ALERT = "#b00020"


@dataclass(frozen=True)
class ReportInput:
    title: str
    assessment_name: str
    as_of: str
    soa: Content
    gaps: Content
    maturity: Content
    poam: Content
    scope: Content = field(default_factory=dict)
    evidence: Content = field(default_factory=dict)
    signoff: list[Content] = field(default_factory=list)
    """Per input artifact: version, checksum, approvals and amendments (see signoff.py)."""
    statement: Content = field(default_factory=dict)
    """The assessor's statement reviewers set on the report draft: conclusion, scope
    boundary, period (see workers.reporting.statement)."""
    assessment_id: str = ""
    documents: list[Content] = field(default_factory=list)
    """The assessment's uploaded documents (filename, media type, sha256): its subjects."""
    ssp_href: str = ""
    """Where the system's OSCAL SSP is (settings: oscal_ssp_href); empty: a placeholder."""
    system_id: str = ""
    """The system's FedRAMP id (settings: oscal_system_id); empty: the assessment id."""
    controls: dict[str, Content] = field(default_factory=dict)
    """SCF control id -> its texts in the catalogue's words (control_texts.py): what the
    OSCAL assessment plan's activities examine."""
    objectives: list[Content] = field(default_factory=list)
    """OSCAL local objectives: SP 800-53A's objectives and EXAMINE method per NIST control the
    activities relate to, from the run's pinned NIST catalogue (nist_objectives.py)."""
    roster: list[Content] = field(default_factory=list)
    """The assessment's roster (name, email, principal, telephone, roles), in the order people were
    added: who fills FedRAMP's roles in the OSCAL assessment plan (oscal_fedramp_people.py)."""
    assessor: Content = field(default_factory=dict)
    """The assessing organisation (settings: oscal_assessor_*): name, ISO/IEC 17020
    accreditation id, address; what is not set is left out of the plan."""
    risks: list[Content] = field(default_factory=list)
    """The register's risks people accepted from (or merged with) the gap findings, each
    with its likelihood, impact, treatment and findings (service.risk_proposals)."""


def by_section(namespace: dict[str, Any]) -> dict[str, Any]:
    """Each section's builder in a renderer's module: the function named `_<section key>`
    (a section without one fails at once, on the first report)."""
    return {key: namespace[f"_{key}"] for key, _ in SECTIONS}


def render_report_html(report: ReportInput) -> str:
    """The page from templates/report.html; each section's template
    (templates/sections/<key>.html) gets what its builder below gives it as `s`."""
    computing("rendering")
    builders = by_section(globals())
    sections = [(key, heading, builders[key](report)) for key, heading in SECTIONS]
    return TEMPLATES.get_template("report.html").render(
        report=report, credit=credit_line(report), sections=sections
    )


def report_figures(report: ReportInput) -> Figures:
    return figures(report.soa, report.evidence, report.gaps)


def summary_rows(report: ReportInput) -> list[tuple[str, Any]]:
    """The headline figures, shared by every rendering of the report: each counted from
    the drafts' in-scope rows (workers.reporting.figures)."""
    soa = report.soa.get("summary", {})
    counted = report_figures(report)
    severity = counted.by_severity
    proposals = counted.proposals
    return [
        ("Framework", report.soa.get("framework", report.scope.get("framework", "SCF"))),
        ("Requirements in the SoA", counted.soa_rows),
        ("Applicable requirements", counted.soa_applicable),
        ("SCF controls in scope", soa.get("scf_controls", soa.get("controls", 0))),
        ("Requirements assessed in scope (sub-items rolled up)", counted.requirements_in_scope),
        ("Requirements with evidence", counted.requirements_met),
        (
            "Gaps (high / medium / low)",
            f"{counted.gaps} ({severity['high']} / {severity['medium']} / {severity['low']})",
        ),
        ("Findings dismissed as not a gap (by a reviewer)", counted.not_a_gap),
        (
            "Evidence rows in scope (found / weak / none / unadopted template)",
            f"{counted.evidence_rows_in_scope} ({proposals['evidence_found']} / "
            f"{proposals['weak_evidence']} / {proposals['no_evidence_found']} / "
            f"{proposals['template_not_adopted']})",
        ),
        ("Requirements out of scope (not counted above)", counted.out_of_scope),
        ("Overall maturity (0-5)", report.maturity.get("overall_level", "n/a")),
        ("POA&M items", len(report.poam.get("items", []))),
        *(("Control catalogue", full_name_version(c)) for c in catalogues(report)[:1]),
    ]


def catalogues(report: ReportInput) -> list[Content]:
    """The catalogue versions the drafts name (the SCF workbook first, then any framework's
    own catalogue, such as NIST's OSCAL), each once, with its licence and attribution."""
    found: list[Content] = []
    candidates = [report.soa.get("catalog"), report.scope.get("catalog")]
    candidates += [f.get("catalog") for f in report.scope.get("frameworks", [])]
    for catalog in candidates:
        if isinstance(catalog, dict) and all(
            (catalog.get("name"), catalog.get("version")) != (c["name"], c["version"])
            for c in found
        ):
            found.append(catalog)
    return found


def name_version(catalog: Content) -> str:
    """ "SCF 2022.3": the short name people cite a catalogue version by."""
    name = str(catalog.get("name") or "")
    short = name[name.rfind("(") + 1 : -1] if name.endswith(")") and "(" in name else name
    return f"{short} {catalog.get('version')}".strip()


def full_name_version(catalog: Content) -> str:
    """ "Secure Controls Framework (SCF) 2022.3": the name the source gives, with its version."""
    return f"{catalog.get('name') or ''} {catalog.get('version') or ''}".strip()


def credit_line(report: ReportInput) -> str:
    """One line naming each catalogue version and what its licence asks to be credited."""
    parts = [
        f"{name_version(c)}: {c.get('attribution') or c.get('licence') or ''}".rstrip(": ")
        for c in catalogues(report)
    ]
    return "Control catalogues: " + "; ".join(parts) if parts else ""


def catalogue_rows(report: ReportInput) -> list[tuple[str, str, str, str]]:
    return [
        (
            name_version(c),
            str(c.get("name") or ""),
            str(c.get("licence") or ""),
            str(c.get("attribution") or ""),
        )
        for c in catalogues(report)
    ]


CATALOGUE_HEADERS = ("Catalogue", "Name", "Licence", "Attribution")


GAP_HEADERS = ("Control", "Title", "Severity", "Evidence", "Owner", "Finding")


def gap_rows(report: ReportInput) -> list[tuple[Any, ...]]:
    """One row per gap finding: what the evidence showed in words and who owns it, never a
    similarity score."""
    return [
        (
            g.get("control_id"),
            g.get("title"),
            g.get("severity"),
            str(g.get("evidence_state") or "").replace("_", " "),
            owner_shown(g),
            g.get("finding"),
        )
        for g in open_gaps(report.gaps)
    ]


DISMISSED_HEADERS = ("Finding", "Title", "Severity proposed", "Why not a gap", "Decided by", "When")


def dismissed_rows(report: ReportInput) -> list[tuple[Any, ...]]:
    """The findings a reviewer marked not a gap: out of the gap list and the POA&M, shown
    with the reason and who decided."""
    return [
        (d["control_id"], d["title"], d["severity"], d["reason"], d["by"], d["at"])
        for d in dismissed_gaps(report.gaps)
    ]


def owner_shown(row: Content) -> str:
    """The owner a person set, else who is proposed, marked as proposed (a role only where
    the assessment has no roster)."""
    owner = str(row.get("owner") or "").strip()
    if owner or row.get("proposed_owner_kind"):
        return str(point_of_contact(owner, row)["point_of_contact"])
    return "unassigned"


def signoff_rows(report: ReportInput) -> list[tuple[str, ...]]:
    """One row per approval of each input (or one saying it has none)."""
    return [row for row, _ in signoff_lines(report)]


def signoff_lines(report: ReportInput) -> list[tuple[tuple[str, ...], bool]]:
    """The sign-off rows, each with whether it names an input nobody approved (shown in
    red: the report gate refuses while one is)."""
    lines: list[tuple[tuple[str, ...], bool]] = []
    for entry in report.signoff:
        artifact = f"{entry.get('label')} v{entry.get('version')}"
        checksum = str(entry.get("sha256") or "")[:16]
        amended = (
            f"{entry['amendments']} by {', '.join(entry.get('amended_by', []))}"
            if entry.get("amendments")
            else "none"
        )
        approvals = entry.get("approvals") or []
        if not approvals:
            gated = entry.get("gated", True)
            said = "NOT APPROVED" if gated else str(entry.get("note") or "no gate of its own")
            status = str(entry.get("status"))
            lines.append(((artifact, checksum, status, said, "", "", amended), bool(gated)))
        for approval in approvals:
            row = (
                artifact,
                checksum,
                str(entry.get("status")),
                str(approval.get("approver_id")),
                ", ".join(approval.get("roles") or []),
                str(approval.get("at")),
                amended,
            )
            lines.append((row, False))
    return lines


STATEMENT_FIELDS = (
    ("conclusion", "Assessor's conclusion"),
    ("scope_boundary", "Scope boundary"),
    ("period", "Period assessed"),
    ("set_by", "Written by"),
)


def statement_rows(report: ReportInput) -> list[tuple[str, str]]:
    """The assessor's statement; what nobody wrote yet says so."""
    statement = report.statement
    start, end = statement.get("period_start"), statement.get("period_end")
    values = {
        "conclusion": statement.get("conclusion"),
        "scope_boundary": statement.get("scope_boundary"),
        "period": f"{start or '…'} to {end or '…'}" if start or end else None,
        "set_by": ", ".join(statement.get("set_by") or []) or None,
    }
    rows = [
        (label, str(values[key]) if values[key] else "not yet set by a reviewer")
        for key, label in STATEMENT_FIELDS
    ]
    warning = conclusion_warning(statement.get("conclusion"), report_figures(report))
    if warning:
        rows.insert(1, (WARNING_LABEL, warning))
    return rows


#: The statement row that flags a conclusion the figures contradict (HTML and PDF show it).
WARNING_LABEL = "Warning: conclusion and figures disagree"


SIGNOFF_HEADERS = (
    "Artifact",
    "SHA-256 (first 16)",
    "Status",
    "Approved by",
    "Roles",
    "When",
    "Amendments",
)


def soa_table(report: ReportInput) -> list[tuple[Any, ...]]:
    """The SoA's rows as the report shows them, each with how its status was decided."""
    decided = soa_decided(report.soa)
    return [
        (
            row.get("requirement_id"),
            row.get("title") or "",
            ", ".join(str(c) for c in row.get("scf_controls") or []),
            "Yes" if row.get("applicable") else "No",
            row.get("justification"),
            basis_shown(row.get("basis")),
            str(row.get("proposal") or "").replace("_", " "),
            str(row.get("implementation_status") or "not yet assessed").replace("_", " "),
            owner_shown(row),
            "; ".join(cite_label(c) for c in row.get("evidence") or []),
            decided[index] if index < len(decided) else "",
        )
        for index, row in enumerate(soa_rows(report.soa))
    ]


def soa_body(report: ReportInput) -> tuple[tuple[str, ...], list[tuple[Any, ...]], str | None]:
    """The SoA section's table: every row, or the rows counted per family when the SoA is
    long (`soa_summary`), with a sentence saying where every row is."""
    rows = soa_rows(report.soa)
    if not summarised(rows):
        return SOA_HEADERS, soa_table(report), None
    return SUMMARY_HEADERS, family_summary_rows(rows), summary_note(len(rows))


def basis_shown(basis: Any) -> str:
    """What a row rests on (ISO/IEC 27001 6.1.3 d), as the SoA was drafted: the treated
    risks that select it, the requirement a person stated, or the exclusion's reason."""
    if not isinstance(basis, dict):
        return "none stated"
    if basis.get("kind") == RISK_TREATMENT:
        return f"Risk treatment: {risks_named(basis.get('risks') or [], accepted=True)}"
    if basis.get("kind") == LEGAL:
        return f"{REQUIRED_BY} {basis.get('requirement')}"
    return f"Exclusion: {basis.get('reason')}"


def soa_decided(soa: Content) -> list[str]:
    """Per SoA row, in order, how its status was decided (none for a draft before
    per-requirement rows, which records no amendments by row)."""
    if not isinstance(soa.get("requirements"), list):
        return []
    return list(row_decision_labels("soa", soa).values())


SOA_HEADERS = (
    "Requirement",
    "Title",
    "SCF controls",
    "Applicable",
    "Justification",
    "Basis",
    "Proposed",
    "Implementation",
    "Owner",
    "Evidence",
    "Decided",
)


def cite_label(cite: Content) -> str:
    where = " › ".join(
        str(part)
        for part in (cite.get("document") or cite.get("filename"), cite.get("heading_path"))
        if part
    )
    pages = cite.get("pages") or []
    if pages:
        where += f", p. {pages[0]}" if len(pages) == 1 else f", pp. {pages[0]}-{pages[-1]}"
    return where


def supporting(control: Content) -> list[Content]:
    # Evidence rows (passages a proposal rests on); older drafts listed `citations`.
    if "evidence" in control:
        return list(control.get("evidence") or [])
    return [c for c in control.get("citations") or [] if c.get("supports", True)]


def page_label(cite: Content) -> str:
    first, last = cite.get("page_start"), cite.get("page_end")
    if not first:
        return ""
    return f"p. {first}" if not last or last == first else f"pp. {first}-{last}"


POAM_COLUMNS: tuple[tuple[str, str], ...] = (
    ("id", "Id"),
    ("control_id", "Control"),
    ("weakness", "Weakness"),
    ("remediation", "Remediation"),
    ("priority", "Priority"),
    ("milestone_date", "Milestone"),
    ("owner_role", "Owner"),
)
POAM_HEADERS = [title for _, title in POAM_COLUMNS]


#: A POA&M item's columns in the report's body when the plan is long: its weakness and
#: remediation (the long text) are in the POA&M export and in the findings appendix.
POAM_BRIEF = ("id", "control_id", "priority", "milestone_date", "owner_role")


def poam_rows(report: ReportInput) -> list[list[Any]]:
    return [[item.get(key) for key, _ in POAM_COLUMNS] for item in report.poam.get("items", [])]


def poam_body(report: ReportInput) -> tuple[list[str], list[list[Any]], str | None]:
    """The POA&M section's table: every column, or one short line per item when the plan
    is long, with a sentence saying where the rest is."""
    items = report.poam.get("items", [])
    if not summarised(items):
        return POAM_HEADERS, poam_rows(report), None
    titles = dict(POAM_COLUMNS)
    where = (
        f"The plan has {len(items):,} items, so this section lists each in one line. Each "
        "item's weakness and remediation are in the POA&M export (CSV and XLSX), and each "
        "finding in full in the appendix."
    )
    rows = [[item.get(key) for key in POAM_BRIEF] for item in items]
    return [titles[key] for key in POAM_BRIEF], rows, where


def cited_controls(report: ReportInput) -> list[Content]:
    """The evidence draft's controls that rest on at least one passage."""
    return [c for c in report.evidence.get("controls", []) if supporting(c)]


def citation_label(cite: Content) -> str:
    """Where a passage stands: its file, its heading path and its pages."""
    where = " › ".join(
        filter(None, (str(cite.get("filename") or ""), str(cite.get("heading_path") or "")))
    )
    pages = page_label(cite)
    return f"{where}, {pages}" if pages else where


SCOPE_HEADERS = ("Domain", "Name", "Controls")


def scope_rows(report: ReportInput) -> list[tuple[Any, Any, int]]:
    return [
        (d.get("domain"), d.get("name"), len(d.get("controls", [])))
        for d in report.scope.get("domains", [])
    ]


def out_of_scope(report: ReportInput) -> str:
    """The domains the scope leaves out, listed; empty when it leaves none out."""
    out = report.scope.get("out_of_scope", [])
    return ", ".join(f"{d.get('domain')} {d.get('name')}" for d in out)


#: Where the gap section sends its reader for each finding's condition, cause and effect.
APPENDIX_NOTE = (
    "Each finding in full (condition, criteria, cause, effect, recommendation): appendix."
)


# What each section's template is given: the rows and figures it shows, nothing drawn.


def _summary(report: ReportInput) -> Content:
    return {"rows": summary_rows(report)}


def _statement(report: ReportInput) -> Content:
    rows = statement_rows(report)
    return {"rows": rows, "alerts": [label == WARNING_LABEL for label, _ in rows]}


def _signoff(report: ReportInput) -> Content:
    lines = signoff_lines(report)
    return {
        "headers": SIGNOFF_HEADERS,
        "rows": [row for row, _ in lines],
        "alerts": [alert for _, alert in lines],
    }


def _scope(report: ReportInput) -> Content:
    return {
        "present": bool(report.scope),
        "domains": scope_rows(report),
        "out_of_scope": out_of_scope(report),
    }


def _soa(report: ReportInput) -> Content:
    chart = status_chart(report.soa)
    headers, rows, where = soa_body(report)
    return {
        "said": [*decision_lines(report.soa), *([where] if where else [])],
        "headers": headers,
        "rows": rows,
        "chart": chart,
        "layout": layout(chart),
    }


def _gaps(report: ReportInput) -> Content:
    gaps = open_gaps(report.gaps)
    return {
        "count": len(gaps),
        "family_headers": FAMILY_HEADERS,
        "families": family_rows(gaps),
        "brief_headers": BRIEF_HEADERS,
        "brief": brief_rows(gaps),
        "note": APPENDIX_NOTE,
        "dismissed_headers": DISMISSED_HEADERS,
        "dismissed": dismissed_rows(report),
    }


def _maturity(report: ReportInput) -> Content:
    chart = maturity_chart(report.maturity)
    return {
        "headers": MATURITY_HEADERS,
        "rows": maturity_rows(report),
        "chart": chart,
        "layout": layout(chart),
    }


MATURITY_HEADERS = ("Domain", "Name", "Level", "Label", "Rationale")


def maturity_rows(report: ReportInput) -> list[tuple[Any, ...]]:
    return [
        (d.get("domain"), d.get("name"), d.get("level"), d.get("label"), d.get("rationale"))
        for d in report.maturity.get("domains", [])
    ]


def _poam(report: ReportInput) -> Content:
    headers, rows, where = poam_body(report)
    return {"headers": headers, "rows": rows, "said": [where] if where else []}


def _evidence(report: ReportInput) -> Content:
    controls = cited_controls(report)
    return {
        "controls": [
            {
                "control_id": control.get("control_id"),
                "title": control.get("title"),
                "citations": [
                    {
                        "filename": cite.get("filename"),
                        "heading_path": cite.get("heading_path"),
                        "pages": page_label(cite) if cite.get("page_start") else "",
                        "score": f"{float(cite.get('score', 0.0)):.2f}",
                        "excerpt": cite.get("excerpt"),
                    }
                    for cite in supporting(control)
                ],
            }
            for control in controls
        ]
    }


def _catalogues(report: ReportInput) -> Content:
    return {"headers": CATALOGUE_HEADERS, "rows": catalogue_rows(report)}


def _findings(report: ReportInput) -> Content:
    return {"headers": GAP_HEADERS, "rows": gap_rows(report) if open_gaps(report.gaps) else []}
