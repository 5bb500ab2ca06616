"""How long the report of a whole-catalogue assessment takes to render, per format.

1. Build (once per home): one lifecycle run on SCF (1,090 requirements, every control of
   the catalogue) driven to completed by the scripted reviewer, with the demo's sample
   policies and the shared ones where present (`bench.console_pages.build`).
2. Measure: the report's input read from that run as the report job reads it, then each
   format rendered `--repeat` times; per format the median seconds and the size, and the
   PDF's pages. A report job renders all of them (and the HTML) once per draft.

    python -m bench.report_render [--home DIR] [--repeat 3] [--record]

Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.console_pages import MARKER, TENANT, build
from bench.record import add_record_flag, record_if_asked

FRAMEWORK = "SCF"


def _request(run_id: str) -> Any:
    from orchestrator.contracts.jobs import JobKind, JobRequest
    from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
    from orchestrator.db.models import WorkflowRun
    from orchestrator.db.session import read_transaction

    with read_transaction() as session:
        run = session.get(WorkflowRun, uuid.UUID(run_id))
        assert run is not None, f"no run {run_id} in this home"
        return JobRequest(
            job_id=f"bench-report-{run_id}",
            kind=JobKind.RENDER_REPORT,
            run_id=run.id,
            step=Step.CREATE_REPORT,
            attempt=1,
            idempotency_key="bench",
            trace_id="bench",
            tenant_id=TENANT,
            organization_id=run.organization_id,
            assessment_id=run.assessment_id,
            actor_id="bench",
        )


def _renderers(as_of: str) -> dict[str, Callable[[Any], Any]]:
    from workers.reporting import exports, oscal_export
    from workers.reporting.render import render_report_html

    return {
        "html": render_report_html,
        "pdf": exports.render_report_pdf,
        "docx": exports.render_report_docx,
        "json": exports.render_report_json,
        "soa_xlsx": lambda report: exports.render_soa_xlsx(report, as_of),
        "findings_xlsx": lambda report: exports.render_findings_xlsx(report, as_of),
        "poam_xlsx": lambda report: exports.render_poam_xlsx(report, as_of),
        "oscal_assessment_plan": lambda report: oscal_export.render_oscal_assessment_plan(
            report, as_of
        ),
        "oscal_poam": lambda report: oscal_export.render_oscal_poam(report, as_of),
        "all exports": lambda report: exports.render_exports(report, as_of),
    }


def measure(run_id: str, repeat: int) -> dict[str, Any]:
    import pypdfium2 as pdfium

    from orchestrator.config.settings import get_settings
    from orchestrator.db.session import read_transaction
    from orchestrator.jobs.interface import JobContext
    from workers.reporting.service import report_input

    request = _request(run_id)
    with read_transaction() as session:
        context = JobContext(
            request=request, session=session, storage_dir=get_settings().resolved_storage_dir
        )
        began = time.perf_counter()
        report, as_of = report_input(context)
        read_s = time.perf_counter() - began
    figures: dict[str, Any] = {
        "requirements": len(report.soa.get("requirements", [])),
        "read the input, s": round(read_s, 2),
    }
    for name, render in _renderers(as_of).items():
        seconds, output = [], None
        for _ in range(repeat):
            began = time.perf_counter()
            output = render(report)
            seconds.append(time.perf_counter() - began)
        figures[f"{name}, median s"] = round(statistics.median(seconds), 2)
        if isinstance(output, (bytes, str)):
            figures[f"{name}, KB"] = round(len(output) / 1024)
        if name == "pdf":
            assert isinstance(output, bytes)
            figures["pdf, pages"] = len(pdfium.PdfDocument(io.BytesIO(output)))
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--home", type=Path, help="kept between calls (default: a new one)")
    parser.add_argument("--repeat", type=int, default=3)
    add_record_flag(parser)
    args = parser.parse_args(argv)
    home = args.home or Path(tempfile.mkdtemp(prefix="bench-report-"))
    home.mkdir(parents=True, exist_ok=True)
    os.environ["LIFECYCLE_HOME"] = str(home)
    marker = home / MARKER
    built = json.loads(marker.read_text()) if marker.exists() else build(home, FRAMEWORK)
    assert built["framework"] == FRAMEWORK, f"{home} holds a {built['framework']} run"
    figures = measure(built["run_id"], args.repeat)
    print(json.dumps({"built": built, **figures}, indent=2))
    record_if_asked(
        args,
        "report_render",
        [
            ("every export, median", figures["all exports, median s"], "s"),
            ("PDF, median", figures["pdf, median s"], "s"),
            ("PDF pages", figures["pdf, pages"], ""),
            ("HTML, median", figures["html, median s"], "s"),
            ("DOCX, median", figures["docx, median s"], "s"),
            ("requirements", figures["requirements"], ""),
        ],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
