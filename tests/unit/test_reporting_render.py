"""The HTML report: complete, escaped, stored once."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.clock import set_clock
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Artifact
from orchestrator.jobs.interface import JobFailure
from tests.unit.servicekit import FIXED_NOW, Kit, add_standard_documents, open_kit
from workers.reporting.render import ReportInput, render_report_html
from workers.reporting.service import render_report

HOSTILE = '<script>alert("x")</script>'


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path, assessment_name=f"Acme {HOSTILE}") as kit:
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
    kit.add_document(f"{HOSTILE}.md", f"# Multi-factor authentication {HOSTILE}\n"
                     f"MFA multi-factor authentication is required {HOSTILE} for remote access.")
    kit.run_through(Step.CREATE_SOA_DRAFT)
    soa = kit.latest(ArtifactKind.SOA)
    assert soa is not None
    controls = [c | {"justification": f"{c['justification']} {HOSTILE}",
                     "title": f"<img src=x onerror=alert(1)> {c['title']}"}
                for c in soa.content["controls"]]
    kit.add_artifact(ArtifactKind.SOA, soa.content | {"controls": controls})
    kit.run_through(Step.CREATE_REPORT, start=Step.INGEST_SOA)
    artifact = kit.latest(ArtifactKind.REPORT)
    assert artifact is not None
    html = Path(artifact.storage_path or "").read_text()
    assert "<script>" not in html and "<img" not in html
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "&lt;/script&gt;.md" in html  # the hostile file name, cited as evidence


def test_render_is_deterministic_and_escapes_attributes() -> None:
    report = ReportInput(title='"><b>t', assessment_name="a", as_of="2025-03-01",
                         soa={"controls": [{"control_id": "X-1", "title": "t",
                                            "applicable": True, "justification": "j & k"}]},
                         gaps={}, maturity={}, poam={})
    html = render_report_html(report)
    assert html == render_report_html(report)
    assert "<title>&quot;&gt;&lt;b&gt;t</title>" in html
    assert "j &amp; k" in html


def test_a_redelivered_report_job_reuses_its_artifact(kit: Kit) -> None:
    kit.run_through(Step.CREATE_POAM)
    context = kit.context(Step.CREATE_REPORT, job_id="job-report")
    first = render_report(context)
    kit.session.commit()
    again = render_report(context)
    kit.session.commit()
    assert again.artifact == first.artifact
    assert again.summary["path"] == first.summary["path"]
    reports = kit.session.scalars(select(Artifact).where(Artifact.kind == "report")).all()
    assert len(reports) == 1


def test_the_report_needs_the_approved_chain(kit: Kit) -> None:
    kit.run_through(Step.CREATE_GAP_ANALYSIS)
    with pytest.raises(JobFailure) as failure:
        render_report(kit.context(Step.CREATE_REPORT))
    assert failure.value.code == "missing_input"
