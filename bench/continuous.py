"""Reassessment of what changed against a full re-run, on the 141 labelled procedures.

Uploads every procedure of `../shared/data/evidence/procedures`, selects SOC 2 and drafts
through the POA&M (ingest, index, pre-analysis, scope, SoA, evidence analysis, gap analysis,
maturity, POA&M: the full run), approving each draft, then uploads a new version of one
procedure (the one the approved SoA cites most, with one section removed) and evaluates the
reassessment it starts (the SoA's changed rows, carried into the gap analysis and the
POA&M). Prints, for each: seconds, jobs, rows re-evaluated and rows asking approval.

    python -m bench.continuous [--data ../shared/data/evidence]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from sqlalchemy import select

from bench.record import add_record_flag, record_if_asked
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.continuous_models import Reassessment
from orchestrator.db.models import Document
from orchestrator.db.session import read_transaction
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)
from orchestrator.service.document_versions import upload_document_version
from tests.support.services import PIPELINE, TENANT, USER, Kit, open_kit
from workers.analysis.reassessment import evaluate_reassessment

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "evidence"
#: Every job step up to the report.
FULL_RUN = PIPELINE[: PIPELINE.index(Step.CREATE_REPORT)]


def full_run(kit: Kit, procedures: list[Path]) -> float:
    started = time.perf_counter()
    for path in procedures:
        kit.add_document(path.name, path.read_bytes())
    kit.session.commit()
    for step in FULL_RUN:
        kit.run_step(step)
        produced = kit.results[step].artifact
        if produced is not None:
            kit.approve(produced.kind)
            kit.session.commit()
    return time.perf_counter() - started


def most_cited(kit: Kit) -> tuple[Document, int]:
    rows = kit.content(ArtifactKind.SOA)["requirements"]
    counts = Counter(
        str(c.get("document")) for row in rows for c in row.get("evidence", []) if c.get("document")
    )
    name, cited = counts.most_common(1)[0]
    document = kit.session.scalar(
        select(Document).where(
            Document.assessment_id == kit.assessment.id, Document.filename == name
        )
    )
    assert document is not None
    return document, cited


def changed_text(path: Path) -> bytes:
    """The procedure without its last section: a revision of one document."""
    text = path.read_text()
    cut = text.rfind("\n## ")
    return (text[:cut] if cut > 0 else text + "\n\nRevised.\n").encode()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_record_flag(parser)
    args = parser.parse_args()
    procedures = sorted((args.data / "procedures").glob("*.md"))
    work = Path(tempfile.mkdtemp(prefix="bench-continuous-"))
    os.environ["LIFECYCLE_HOME"] = str(work / "home")
    os.environ["LIFECYCLE_DATABASE_URL"] = f"sqlite:///{work / 'kit' / 't.db'}"
    reset_settings()
    (work / "kit").mkdir()
    with open_kit(work / "kit") as kit:
        kit.framework = "SOC 2"
        full_s = full_run(kit, procedures)
        soa = kit.content(ArtifactKind.SOA)["requirements"]
        applicable = sum(1 for row in soa if row.get("applicable"))
        findings = len(kit.content(ArtifactKind.GAP_ANALYSIS).get("gaps", []))
        items = len(kit.content(ArtifactKind.POAM).get("items", []))
        print(
            f"full run ({len(procedures)} procedures, SOC 2): {full_s:.1f}s, "
            f"{len(FULL_RUN)} jobs, {applicable} of {len(soa)} rows evaluated, "
            f"{len(soa)} SoA rows, {findings} findings and {items} POA&M items asking approval"
        )
        document, cited = most_cited(kit)
        kit.session.commit()  # the kit's session holds SQLite's write lock while it reads
        source = next(p for p in procedures if p.name == document.filename)
        revised = work / document.filename
        revised.write_bytes(changed_text(source))
        started = time.perf_counter()
        upload_document_version(
            Actor(TENANT, USER),
            kit.assessment.id,
            document.id,
            document.filename,
            revised,
            kick=lambda _run: None,
        )
        with read_transaction() as session:
            reassessment_id: uuid.UUID = session.scalars(select(Reassessment.id)).one()
        status = evaluate_reassessment(reassessment_id)
        change_s = time.perf_counter() - started
        with read_transaction() as session:
            figures = session.get(Reassessment, reassessment_id).figures or {}  # type: ignore[union-attr]
        print(
            f"one procedure changed ({document.filename}, cited by {cited} rows): "
            f"{change_s:.1f}s, 1 job, {figures.get('rows_reevaluated')} rows re-evaluated "
            f"({figures.get('rows_touched')} touched: citing it or now matching), "
            f"{figures.get('rows_changed')} SoA rows, {figures.get('findings_changed', 0)} "
            f"findings and {figures.get('poam_items_changed', 0)} POA&M items asking "
            f"approval; status {status}"
        )
        print(
            f"ratio: time {change_s / full_s:.1%} of the full run, rows re-evaluated "
            f"{(figures.get('rows_reevaluated') or 0) / max(applicable, 1):.1%}"
        )
    record_if_asked(
        args,
        "continuous",
        [
            ("reassessment, one procedure changed", change_s, "s"),
            ("full run", full_s, "s"),
            ("rows re-evaluated by the reassessment", figures.get("rows_reevaluated") or 0, "rows"),
        ],
    )


if __name__ == "__main__":
    main()
