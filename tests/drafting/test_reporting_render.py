"""The report and its exports: complete, escaped, deterministic, stored once."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Artifact
from orchestrator.db.report_models import ReportExport
from orchestrator.jobs.interface import JobFailure
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.service.amendments import amended_content
from tests.support.approvals import record_approval
from tests.support.services import FIXED_NOW, Kit, add_standard_documents, open_kit
from workers.reporting.oscal_plan import NO_OBJECTIVES
from workers.reporting.pdf import render_report_pdf
from workers.reporting.render import SECTIONS, ReportInput, render_report_html
from workers.reporting.service import render_report

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path, assessment_name=f"Acme {HOSTILE}") as kit:
            # SOC 2, not all of SCF: a report of 61 requirements renders in seconds, and what
            # these tests check does not grow with the rows (test_pdf_lays_out_long_tables).
            kit.framework = "SOC 2"
            add_standard_documents(kit)
            yield kit
    finally:
        set_clock(None)


def test_report_renders_every_section_and_is_stored(kit: Kit) -> None:
    result = kit.run_through(Step.CREATE_REPORT)
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None and result.artifact is not None
    assert (artifact.media_type, artifact.content["format"]) == ("text/html", "html")
    assert result.summary["path"] == artifact.storage_path == artifact.content["path"]
    html = Path(artifact.storage_path or "").read_text()
    assert html.startswith("<!DOCTYPE html>")
    for section in artifact.content["sections"]:
        assert f'<section id="{section}">' in html
    gaps = kit.content(ArtifactKind.GAP_ANALYSIS)["gaps"]
    poam = kit.content(ArtifactKind.POAM)["items"]
    assert all(gap["control_id"] in html for gap in gaps)
    assert all(item["id"] in html and item["milestone_date"] in html for item in poam)
    # Evidence is cited with its document and heading path.
    assert "access-control-policy.md &rsaquo; Access Control Policy &gt; Authentication" in html
    assert "Assessment: Acme &lt;script&gt;" in html


def test_hostile_text_is_escaped_everywhere(kit: Kit) -> None:
    kit.add_document(
        f"{HOSTILE}.md",
        f"# Multi-factor authentication {HOSTILE}\n"
        f"MFA multi-factor authentication is required {HOSTILE} for remote access.",
    )
    kit.run_through(Step.CREATE_SOA_DRAFT)
    soa = kit.latest(ArtifactKind.SOA)
    assert soa is not None
    rows = [
        row
        | {
            "justification": f"{row['justification']} {HOSTILE}",
            "title": f"<img src=x onerror=alert(1)> {row['title']}",
            "owner": HOSTILE,
        }
        for row in soa.content["requirements"]
    ]
    kit.add_artifact(ArtifactKind.SOA, soa.content | {"requirements": rows})
    kit.run_through(Step.CREATE_REPORT, start=Step.INGEST_SOA)
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None
    html = Path(artifact.storage_path or "").read_text()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;/script&gt;.md" in html  # the hostile file name, cited as evidence


def test_render_is_deterministic_and_escapes_attributes() -> None:
    report = ReportInput(
        title='"><b>t',
        assessment_name="a",
        as_of="2025-03-01",
        soa={
            "requirements": [
                {
                    "requirement_id": "X-1",
                    "title": "t",
                    "applicable": True,
                    "justification": "j & k",
                }
            ]
        },
        gaps={},
        maturity={},
        poam={},
    )
    html = render_report_html(report)
    assert html == render_report_html(report)
    assert "<title>&quot;&gt;&lt;b&gt;t</title>" in html
    assert "j &amp; k" in html


def test_a_redelivered_report_job_reuses_its_artifact(kit: Kit) -> None:
    kit.run_through(Step.CREATE_POAM)
    first, again = kit.deliver_twice(render_report, Step.CREATE_REPORT, "job-report")
    assert again.artifact == first.artifact
    assert again.summary["path"] == first.summary["path"]
    reports = kit.session.scalars(select(Artifact).where(Artifact.kind == "report")).all()
    assert len(reports) == 1


def test_the_report_needs_the_approved_chain(kit: Kit) -> None:
    kit.run_through(Step.CREATE_GAP_ANALYSIS)
    with pytest.raises(JobFailure) as failure:
        render_report(kit.context(Step.CREATE_REPORT))
    assert failure.value.code == "missing_input"


def _exports(kit: Kit) -> dict[str, dict[str, object]]:
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None
    return {entry["kind"]: entry for entry in artifact.content["exports"]}


def test_exports_are_stored_content_addressed_and_listed_in_the_report(kit: Kit) -> None:
    result = kit.run_through(Step.CREATE_REPORT)
    exports = _exports(kit)
    assert set(exports) == {
        "pdf",
        "docx",
        "json",
        "soa_csv",
        "soa_xlsx",
        "findings_csv",
        "findings_xlsx",
        "poam_csv",
        "poam_closed_csv",
        "poam_xlsx",
        "oscal_assessment_plan",
        "oscal_assessment_results",
        "oscal_poam",
    }
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None
    rows = {
        row.kind: row
        for row in kit.session.scalars(
            select(ReportExport).where(ReportExport.artifact_id == artifact.id)
        )
    }
    for kind, entry in exports.items():
        data = Path(str(entry["path"])).read_bytes()
        assert hashlib.sha256(data).hexdigest() == entry["sha256"] == rows[kind].sha256
        assert Path(str(entry["path"])).name.startswith(str(entry["sha256"]))
        assert len(data) == entry["bytes"] == rows[kind].size_bytes
        assert rows[kind].media_type == entry["media_type"]
    assert result.summary["exports"] == {k: e["bytes"] for k, e in exports.items()}
    # No NIST catalogue imported: the plan lists no SP 800-53A objectives and says why.
    plan = json.loads(Path(str(exports["oscal_assessment_plan"]["path"])).read_text())
    definitions = plan["assessment-plan"]["local-definitions"]
    assert "objectives-and-methods" not in definitions
    assert definitions["remarks"] == NO_OBJECTIVES
    # The HTML stays the artifact that reviewers approve.
    assert (artifact.media_type, artifact.kind) == ("text/html", "report")


APPROVERS = {
    ArtifactKind.SOA: ("user:ciso@acme", ["ciso"]),
    ArtifactKind.GAP_ANALYSIS: ("user:assessor@acme", ["assessor", "auditor"]),
    ArtifactKind.MATURITY_ASSESSMENT: ("user:assessor@acme", ["assessor"]),
    ArtifactKind.POAM: ("user:owner@acme", ["risk_owner"]),
}


@pytest.fixture
def signed(kit: Kit) -> Kit:
    """A SOC 2 run whose SoA a reviewer amended, each gate approved by a named person."""
    kit.framework = "SOC 2"
    kit.run_through(Step.CREATE_SOA_DRAFT, approve=False)
    soa = kit.latest(ArtifactKind.SOA)
    assert soa is not None
    row = next(r for r in soa.content["requirements"] if r["applicable"])["requirement_id"]
    change = {"row": row, "changes": {"implementation_status": "implemented", "owner": "CISO"}}
    kit.add_artifact(
        ArtifactKind.SOA,
        amended_content(
            soa.content,
            ArtifactKind.SOA,
            [change],
            actor_id="user:reviewer@acme",
            reason="walked through",
            based_on=soa.version,
        ),
        status="draft",
    )
    for step in (
        Step.CREATE_SOA_DRAFT,
        Step.RUN_EVIDENCE_ANALYSIS,
        Step.CREATE_GAP_ANALYSIS,
        Step.CREATE_MATURITY_ASSESSMENT,
        Step.CREATE_POAM,
    ):
        kind = STEP_SPECS[step].produces
        if step is not Step.CREATE_SOA_DRAFT:
            kit.run_step(step)
        if kind in APPROVERS:
            record_approval(kit, kind, *APPROVERS[kind])
        if step is Step.CREATE_SOA_DRAFT:
            kit.run_step(Step.INGEST_SOA)
    kit.run_step(Step.CREATE_REPORT)
    return kit


def test_the_report_has_contents_sign_off_and_attribution(signed: Kit) -> None:
    artifact = signed.latest(ArtifactKind.REPORT)
    assert artifact is not None
    html = Path(artifact.storage_path or "").read_text()
    contents = html[html.index("<nav") : html.index("</nav>")]
    for key in artifact.content["sections"]:
        assert f'<a href="#{key}">' in contents and f'<section id="{key}">' in html
    signoff = html[html.index('<section id="signoff">') : html.index('<section id="scope">')]
    for kind, (approver, roles) in APPROVERS.items():
        version = signed.latest(kind)
        assert version is not None
        row = re.search(
            rf"<tr><td>[^<]* v{version.version}</td><td>{version.sha256[:16]}</td>"
            rf"<td>approved</td><td>{re.escape(approver)}</td><td>{', '.join(roles)}</td>",
            signoff,
        )
        assert row, (kind, signoff)
    # The amended SoA names how many amendments made it and by whom.
    assert "1 by user:reviewer@acme" in signoff
    assert "SCF 2022.3" in html and "Secure Controls Framework (SCF), CC BY-ND 4.0" in html
    document = json.loads(Path(str(_exports(signed)["json"]["path"])).read_text())
    soa = next(e for e in document["signoff"] if e["kind"] == "soa")
    assert soa["approvals"][0]["approver_id"] == "user:ciso@acme" and soa["amendments"] == 1


def test_pdf_export_carries_every_section(signed: Kit) -> None:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(_exports(signed)["pdf"]["path"]))
    pages = [pdf[i].get_textpage().get_text_range() for i in range(len(pdf))]
    text = "\n".join(pages)
    total = len(pages)
    assert total > 1
    for number, page in enumerate(pages, start=1):
        assert f"page {number} of {total}" in page
    # The contents list each section, in order, with the page its heading is on (each
    # number is a form drawn at the line's end: text extraction may put it on a line of its
    # own).
    first = pages[0]
    at = first.index("Contents") + len("Contents")
    listed: dict[str, int] = {}
    for _, heading in SECTIONS:
        entry = re.compile(rf"\s*{re.escape(heading)}\s+(\d+)\s").match(first, at)
        assert entry, (heading, first[at : at + 80])
        listed[heading], at = int(entry.group(1)), entry.end()
    for heading, page in listed.items():
        body = first[at:] if page == 1 else pages[page - 1]
        assert heading in [line.strip() for line in body.splitlines()], (heading, page)
    for approver, roles in APPROVERS.values():
        assert approver in text and roles[0] in text
    assert "SCF 2022.3" in text and "Secure Controls Framework (SCF), CC BY-ND 4.0" in text
    assert "Acme <script>" in text  # shown as text, never interpreted
    for item in signed.content(ArtifactKind.POAM)["items"]:
        assert item["id"] in text


def test_json_export_is_the_machine_readable_report(kit: Kit) -> None:
    kit.run_through(Step.CREATE_REPORT)
    document = json.loads(Path(str(_exports(kit)["json"]["path"])).read_text())
    assert document["schema"] == "scf-assessment-report/1"
    assert document["poam"] == kit.content(ArtifactKind.POAM)
    assert document["gaps"] == kit.content(ArtifactKind.GAP_ANALYSIS)
    assert document["summary"]["POA&M items"] == len(document["poam"]["items"])
    cited = [c for control in document["evidence"] for c in control["citations"]]
    assert cited and all(c["document"] and c["chunk_id"] for c in cited)
    rows = kit.content(ArtifactKind.EVIDENCE_ANALYSIS)["requirements"]
    assert document["requirements"] == rows


def test_poam_exports_have_one_row_per_item_and_defuse_formulas(kit: Kit) -> None:
    import openpyxl

    kit.run_through(Step.CREATE_POAM)
    poam = kit.latest(ArtifactKind.POAM)
    assert poam is not None
    items = [dict(poam.content["items"][0], weakness='=HYPERLINK("http://x")')]
    items += poam.content["items"][1:]
    kit.add_artifact(ArtifactKind.POAM, poam.content | {"items": items})
    kit.run_step(Step.CREATE_REPORT)
    exports = _exports(kit)
    rows = list(
        csv.reader(
            io.StringIO(Path(str(exports["poam_csv"]["path"])).read_bytes().decode("utf-8-sig"))
        )
    )
    assert rows[0][:4] == ["POAM ID", "Controls", "Weakness Name", "Weakness Description"]
    assert [row[0] for row in rows[1:]] == [item["id"] for item in items]
    assert rows[1][3] == '\'=HYPERLINK("http://x")'
    sheet = openpyxl.load_workbook(str(exports["poam_xlsx"]["path"])).active
    assert sheet is not None
    values = list(sheet.iter_rows(values_only=True))
    assert [list(map(str, row)) for row in values[1:]] == [
        [cell if cell else "None" for cell in row] for row in rows[1:]
    ]


def test_report_files_are_deterministic(kit: Kit) -> None:
    kit.run_through(Step.CREATE_POAM)
    first = render_report(kit.context(Step.CREATE_REPORT, job_id="one"))
    kit.session.rollback()  # as if that delivery never committed
    second = render_report(kit.context(Step.CREATE_REPORT, job_id="two"))
    kit.session.commit()
    assert first.artifact is not None and second.artifact is not None
    assert first.artifact.sha256 == second.artifact.sha256
    assert first.summary["exports"] == second.summary["exports"]


def test_a_redelivered_report_job_adds_no_export_rows(kit: Kit) -> None:
    kit.run_through(Step.CREATE_POAM)
    context = kit.context(Step.CREATE_REPORT, job_id="job-report")
    render_report(context)
    kit.session.commit()
    files = {p for p in (kit.storage_dir / "artifacts").rglob("*") if p.is_file()}
    render_report(context)
    kit.session.commit()
    assert kit.count(ReportExport) == 13
    assert {p for p in (kit.storage_dir / "artifacts").rglob("*") if p.is_file()} == files


def test_pdf_lays_out_long_tables() -> None:
    """A long SoA is laid out as consecutive tables, each with the header row: every row is
    in the PDF once, in order, and the header stands on every page the table spans."""
    import pypdfium2 as pdfium

    rows = [
        {
            "framework": "SCF",
            "requirement_id": f"ZZ-{i:03d}",
            "title": f"Control {i}",
            "scf_controls": [f"ZZ-{i:03d}"],
            "applicable": True,
            "justification": "Applicable: a requirement of the framework in scope. " * 3,
        }
        for i in range(150)
    ]
    report = ReportInput(
        title="Long SoA",
        assessment_name="Long SoA",
        as_of="2025-03-01 09:30 UTC",
        soa={"requirements": rows},
        gaps={},
        maturity={},
        poam={},
    )
    pdf = pdfium.PdfDocument(render_report_pdf(report))
    text = "\n".join(pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
    found = [int(m) for m in re.findall(r"ZZ-(\d{3})", text)]
    assert sorted(set(found)) == list(range(150))
    assert found == sorted(found)  # each in order (a row's id and its control's both count)
    pages_with_rows = [
        page
        for page in (pdf[i].get_textpage().get_text_range() for i in range(len(pdf)))
        if "ZZ-" in page
    ]
    assert len(pages_with_rows) > 3
    assert all("Justification" in page for page in pages_with_rows)
