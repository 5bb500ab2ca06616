"""The report's charts (maturity per domain, status per framework) and its DOCX export:
the charts' values are the drafts' figures in every rendering, the DOCX holds the report's
headings and tables with the JSON report's figures, and hostile text stays text."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from tests.support.services import FIXED_NOW, Kit, add_standard_documents, open_kit
from workers.analysis.dismissals import open_gaps
from workers.reporting.docx_export import render_report_docx
from workers.reporting.pdf import render_report_pdf
from workers.reporting.render import SECTIONS, ReportInput, render_report_html

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """One SOC 2 report of the standard documents (one of them named with a script tag):
    its HTML, its JSON export and its DOCX export, as the report job stored them."""
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path_factory.mktemp("docx"), assessment_name=f"Acme {HOSTILE}") as kit:
            kit.framework = "SOC 2"
            add_standard_documents(kit)
            kit.add_document(
                f"{HOSTILE}.md",
                f"# Multi-factor authentication {HOSTILE}\n"
                "MFA multi-factor authentication is required for all remote access.",
            )
            kit.run_through(Step.CREATE_REPORT)
            yield _stored(kit)
    finally:
        set_clock(None)


def _stored(kit: Kit) -> dict[str, Any]:
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None
    exports = {e["kind"]: e for e in artifact.content["exports"]}
    return {
        "html": Path(artifact.storage_path or "").read_text(),
        "json": json.loads(Path(exports["json"]["path"]).read_text()),
        "docx": exports["docx"],
    }


def _docx(entry: dict[str, Any]) -> Any:
    import docx

    return docx.Document(entry["path"])


def _tables(document: Any) -> dict[tuple[str, ...], list[list[str]]]:
    """Each table by its header row: its body rows as text."""
    found = {}
    for table in document.tables:
        rows = [[cell.text for cell in row.cells] for row in table.rows]
        found[tuple(rows[0])] = rows[1:]
    return found


def _chart_values(html: str, key: str) -> dict[str, int]:
    """The values the inline SVG chart draws: segment label -> value."""
    figure = html[html.index(f'<figure id="chart-{key}">') :]
    figure = figure[: figure.index("</figure>")]
    return {
        label: int(value)
        for label, value in re.findall(r'data-label="([^"]*)" data-value="(\d+)"', figure)
    }


def _expected_segments(record: list[dict[str, Any]], labels: dict[str, str]) -> dict[str, int]:
    from html import escape

    return {
        escape(f"{bar['label']}: {labels[key]} {bar[key]}"): bar[key]
        for bar in record
        for key in labels
        if bar[key]
    }


def test_docx_holds_the_report_headings_and_tables_with_the_json_figures(
    rendered: dict[str, Any],
) -> None:
    entry, document = rendered["docx"], rendered["json"]
    assert entry["media_type"] == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    word = _docx(entry)
    headings = [p.text for p in word.paragraphs if p.style.name.startswith("Heading 1")]
    assert headings == ["Contents", *(heading for _, heading in SECTIONS)]
    title = next(p.text for p in word.paragraphs if p.style.name == "Title")
    assert title == document["title"] and HOSTILE in title  # text, as written
    tables = _tables(word)
    summary = dict(tables[("Figure", "Value")])
    assert summary == {label: str(value) for label, value in document["summary"].items()}
    findings = tables[("Control", "Title", "Severity", "Evidence", "Owner", "Finding")]
    gaps = open_gaps(document["gaps"])
    assert gaps and [row[0] for row in findings] == [g["control_id"] for g in gaps]
    assert [row[2] for row in findings] == [g["severity"] for g in gaps]
    soa = next(rows for header, rows in tables.items() if header[:2] == ("Requirement", "Title"))
    assert [row[0] for row in soa] == [r["requirement_id"] for r in document["soa"]["requirements"]]
    maturity = tables[("Domain", "Name", "Level", "Label", "Rationale")]
    assert [(r[0], r[2]) for r in maturity] == [
        (d["domain"], str(d["level"])) for d in document["maturity"]["domains"]
    ]
    poam = tables[("Id", "Control", "Weakness", "Remediation", "Priority", "Milestone", "Owner")]
    assert [row[0] for row in poam] == [item["id"] for item in document["poam"]["items"]]


def test_docx_charts_are_pictures_with_the_json_figures_beneath(
    rendered: dict[str, Any],
) -> None:
    word = _docx(rendered["docx"])
    charts = rendered["json"]["charts"]
    assert len(word.inline_shapes) == 2  # maturity per domain, status per framework
    tables = _tables(word)
    levels = tables[("", "Level")]
    assert [(label, int(value)) for label, value in levels] == [
        (bar["label"], bar["level"]) for bar in charts["maturity_by_domain"]
    ]
    statuses = next(rows for header, rows in tables.items() if "Partially implemented" in header)
    keys = (
        "implemented",
        "partially_implemented",
        "not_implemented",
        "not_applicable",
        "not_assessed",
        "total",
    )
    assert [[row[0], *map(int, row[1:])] for row in statuses] == [
        [bar["label"], *(bar[key] for key in keys)] for bar in charts["status_by_framework"]
    ]
    # The JSON's figures are the SoA's rows counted again.
    (soc2,) = charts["status_by_framework"]
    rows = rendered["json"]["soa"]["requirements"]
    assert soc2["label"] == "SOC 2" and soc2["total"] == len(rows)
    assert soc2["not_applicable"] == sum(1 for r in rows if r["applicable"] is False)


def test_html_charts_draw_the_json_figures(rendered: dict[str, Any]) -> None:
    html, charts = rendered["html"], rendered["json"]["charts"]
    assert _chart_values(html, "maturity_by_domain") == _expected_segments(
        charts["maturity_by_domain"], {"level": "Level"}
    )
    labels = {
        "implemented": "Implemented",
        "partially_implemented": "Partially implemented",
        "not_implemented": "Not implemented",
        "not_applicable": "Not applicable",
        "not_assessed": "Not yet assessed",
    }
    drawn = _chart_values(html, "status_by_framework")
    assert drawn and drawn == _expected_segments(charts["status_by_framework"], labels)


def _report(**overrides: Any) -> ReportInput:
    soa_rows = [
        {"framework": "SOC 2", "requirement_id": "CC1.1", "applicable": True},
        {
            "framework": "SOC 2",
            "requirement_id": "CC1.2",
            "applicable": True,
            "proposed_implementation_status": "partially_implemented",
        },
        {
            "framework": "SOC 2",
            "requirement_id": "CC1.3",
            "applicable": True,
            "implementation_status": "implemented",  # the reviewer's, over the proposal
            "proposed_implementation_status": "not_implemented",
        },
        {"framework": "ISO/IEC 27001:2022", "requirement_id": "5.1", "applicable": False},
        {
            "framework": "ISO/IEC 27001:2022",
            "requirement_id": "5.2",
            "applicable": True,
            "proposed_implementation_status": "not_implemented",
        },
    ]
    values: dict[str, Any] = {
        "title": "Charts",
        "assessment_name": "Charts",
        "as_of": "2025-03-01 09:30 UTC",
        "soa": {"requirements": soa_rows},
        "gaps": {},
        "maturity": {
            "domains": [
                {"domain": "AST", "name": "Asset Management", "level": 2},
                {"domain": "IAC", "name": "Identification & Authentication", "level": 4},
                {"domain": "GOV", "name": "Governance", "level": 0},
            ]
        },
        "poam": {},
    }
    return ReportInput(**(values | overrides))


def test_html_charts_have_the_right_values() -> None:
    html = render_report_html(_report())
    assert _chart_values(html, "maturity_by_domain") == {
        "AST Asset Management: Level 2": 2,
        "IAC Identification &amp; Authentication: Level 4": 4,
    }
    assert _chart_values(html, "status_by_framework") == {
        "SOC 2: Implemented 1": 1,
        "SOC 2: Partially implemented 1": 1,
        "SOC 2: Not yet assessed 1": 1,
        "ISO/IEC 27001:2022: Not implemented 1": 1,
        "ISO/IEC 27001:2022: Not applicable 1": 1,
    }
    # A bar's length is its share of the scale (maturity: 0-5; status: the largest total).
    widths = dict(
        re.findall(r'width="([\d.]+)" height="14" fill="#1565c0" data-label="([^"]*)"', html)
    )
    assert {label: float(width) for width, label in widths.items()} == {
        "AST Asset Management: Level 2": 160.0,
        "IAC Identification &amp; Authentication: Level 4": 320.0,
    }


def test_pdf_draws_both_charts() -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(render_report_pdf(_report()))
    text = "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    assert "Maturity per domain (0-5)" in text and "Status per framework" in text
    for label in ("Partially implemented", "Not yet assessed", "IAC Identification"):
        assert label in text


def test_templates_escape_hostile_text_in_every_place() -> None:
    report = _report(
        title=f"Report {HOSTILE}",
        assessment_name=HOSTILE,
        soa={
            "requirements": [{"framework": HOSTILE, "requirement_id": HOSTILE, "applicable": True}],
            "framework": HOSTILE,
        },
        maturity={"domains": [{"domain": HOSTILE, "name": "<img src=x>", "level": 1}]},
        documents=[{"filename": f"{HOSTILE}.pdf"}],
        evidence={
            "controls": [
                {
                    "control_id": HOSTILE,
                    "title": "t",
                    "evidence": [{"filename": f"{HOSTILE}.pdf", "excerpt": HOSTILE}],
                }
            ]
        },
    )
    html = render_report_html(report)
    assert "<script" not in html and "<img" not in html
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"
    assert f"<title>Report {escaped}</title>" in html
    assert f'data-label="{escaped}: Not yet assessed 1"' in html  # in an attribute
    assert f">{escaped}</text>" in html  # in the chart's SVG text
    assert f"<strong>{escaped}.pdf</strong>" in html  # the hostile document, cited
    word = _docx({"path": io.BytesIO(render_report_docx(report))})
    assert any(HOSTILE in cell.text for t in word.tables for r in t.rows for cell in r.cells)


def test_docx_is_deterministic_and_survives_control_characters() -> None:
    report = _report(assessment_name="bell \x07 and nul \x00")
    first = render_report_docx(report)
    assert first == render_report_docx(report)
    word = _docx({"path": io.BytesIO(first)})
    assert "bell  and nul " in word.paragraphs[1].text
