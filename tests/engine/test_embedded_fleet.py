"""The main job on the embedded default: SQLite and an in-process real Celery worker."""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import func, select

from orchestrator.catalog.model import SCF_NAME
from orchestrator.catalog.registry import shipped_info
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Assessment, DocumentChunk, Job, OutboxMessage, StepExecution
from orchestrator.db.session import transaction
from orchestrator.demo.roster import CONFIRMED_OWNER
from orchestrator.demo.run import run_demo
from orchestrator.engine.messages import get_app
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.runtime.embedded import embedded_worker
from tests.support.polling import scaled

JOB_STEPS = sum(spec.kind is StepKind.JOB for spec in STEP_SPECS.values())


def test_demo_runs_all_twenty_steps_on_the_embedded_default(embedded: Path) -> None:
    lines: list[str] = []
    with embedded_worker(get_app(), concurrency=3):
        result = run_demo(say=lines.append, stall_s=scaled(120))

    assert result.run.status == "completed", lines
    # The owner wrote the assessor's statement on the report: it was drafted again.
    again = [Step.CREATE_REPORT.value, Step.WAIT_FOR_REPORT_APPROVAL.value]
    steps = [step.value for step in STEP_ORDER]
    assert [step for step, _ in result.steps] == steps[:-1] + again + steps[-1:]
    assert result.report_path is not None
    report = Path(result.report_path)
    assert report.is_relative_to(embedded) and report.read_text().startswith("<!DOCTYPE html>")
    with transaction() as session:
        statuses = list(
            session.scalars(
                select(StepExecution.status).where(StepExecution.run_id == result.run.id)
            )
        )
        jobs = list(session.scalars(select(Job).where(Job.run_id == result.run.id)))
        unpublished = session.scalar(
            select(func.count())
            .select_from(OutboxMessage)
            .where(OutboxMessage.run_id == result.run.id, OutboxMessage.published_at.is_(None))
        )
        chunks = session.scalar(select(func.count()).select_from(DocumentChunk))
        assessment = session.get(Assessment, result.run.assessment_id)
    # Every step completed, but the first wait for the report, replaced by the second.
    assert statuses.count("superseded") == 1 and set(statuses) == {"completed", "superseded"}
    assert {job.status for job in jobs} == {"succeeded"} and len(jobs) == JOB_STEPS + 1
    assert chunks and chunks > 4
    assert unpublished == 0  # every job marked its outbox row when its message arrived
    assert assessment is not None and assessment.status == "closed"
    assert any("reviewer approved scope v1" in line for line in lines)
    assert any("decided" in line and "of soa in bulk" in line for line in lines), lines
    assert any("reviewer approved report v3" in line for line in lines)
    # The owner and date set on the gap analysis are the POA&M item's contact and date.
    assert any(f"point of contact {CONFIRMED_OWNER}" in line for line in lines), lines
    # A roster of a few people: every row and finding proposes one of them as its owner.
    owners = next(line for line in lines if line.startswith("owners: "))
    assert re.fullmatch(
        r"owners: a person proposed on (\d+) of \1 SoA rows and (\d+) of \2 gap findings", owners
    ), owners
    assert any("SOC 2 privacy: 0 applicable" in line for line in lines), lines
    # On the shipped SCF workbook, pinned at start, named with its attribution.
    assert result.run.context["catalogs"] == {SCF_NAME: str(shipped_info().id)}
    html = report.read_text()
    assert "Secure Controls Framework (SCF) 2022.3" in html
    assert "Secure Controls Framework (SCF), CC BY-ND 4.0" in html
    # The demo says what the drafts propose, and the report's exports include OSCAL.
    assert any(line.startswith("evidence: ") and "no_evidence_found" in line for line in lines)
    assert any(line.startswith("maturity: highest control level") for line in lines)
    assert any(
        line.startswith("report exports:")
        and "oscal_assessment_results" in line
        and "oscal_poam" in line
        for line in lines
    ), lines
