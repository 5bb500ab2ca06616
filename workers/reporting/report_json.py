"""The report as machine-readable JSON: the same content as the HTML, with a schema name."""

from __future__ import annotations

import json
from typing import Any

from orchestrator.service.row_decisions import decisions_record
from workers.analysis.dismissals import dismissed_gaps, open_gaps
from workers.analysis.severity import LEVELS
from workers.reporting.charts import chart_record, report_charts
from workers.reporting.conclusion_check import conclusion_warning
from workers.reporting.findings_summary import family_rows
from workers.reporting.poam_stated import stated_poam
from workers.reporting.render import (
    ReportInput,
    catalogues,
    page_label,
    report_figures,
    summary_rows,
    supporting,
)

SCHEMA = "scf-assessment-report/1"


def report_document(report: ReportInput) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "title": report.title,
        "assessment": report.assessment_name,
        "as_of": report.as_of,
        "summary": {label: value for label, value in summary_rows(report)},
        "conclusion_warning": conclusion_warning(
            report.statement.get("conclusion"), report_figures(report)
        ),
        "signoff": report.signoff,
        "catalogues": catalogues(report),
        "scope": report.scope,
        "soa": report.soa,
        "soa_decisions": decisions_record("soa", report.soa)
        if isinstance(report.soa.get("requirements"), list)
        else None,
        "gaps": report.gaps,
        "not_a_gap": dismissed_gaps(report.gaps),
        "gaps_by_family": [
            dict(zip(("family", *LEVELS, "findings"), row, strict=True))
            for row in family_rows(open_gaps(report.gaps))
        ],
        "maturity": report.maturity,
        "charts": {
            chart.key: chart_record(chart) for chart in report_charts(report.soa, report.maturity)
        },
        "poam": stated_poam(report.poam),
        "evidence": [
            _evidence(control)
            for control in report.evidence.get("controls", [])
            if supporting(control)
        ],
        "requirements": report.evidence.get("requirements", []),
    }


def _evidence(control: dict[str, Any]) -> dict[str, Any]:
    return {
        "control_id": control.get("control_id"),
        "title": control.get("title"),
        "citations": [{**cite, "pages": page_label(cite) or None} for cite in supporting(control)],
    }


def render_report_json(report: ReportInput) -> bytes:
    """Sorted keys and fixed separators: the same report, the same bytes."""
    return json.dumps(
        report_document(report), sort_keys=True, indent=2, ensure_ascii=False, default=str
    ).encode("utf-8")
