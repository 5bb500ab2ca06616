"""Ingestion throughput beside the raw parser libraries' own, on the same files.

For each format it times, over the same files:
- raw:      the parser library alone (PDFium text per page, python-docx paragraphs and
            tables, lxml text, openpyxl cell values);
- pipeline: what the worker does per document: the sandboxed parser process (structure,
            normalisation, limits), then chunking;
- job:      the whole ingest_documents job on SQLite (checks, checksum, parse, chunk,
            dedupe, rows), all formats together.

Figures are MB/s and pages/s on wall time, and the same per CPU second (this process plus
the parser process), which is steadier on a shared machine. Peak memory is the maximum
resident size of this process and of the parser process.

    python -m bench.ingestion --rounds 5
"""

from __future__ import annotations

import argparse
import random
import resource
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from sqlalchemy.orm import Session

from bench.record import add_record_flag, record_if_asked
from orchestrator.config.ingestion import IngestionLimits
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.jobs import JobKind, JobRequest
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.migrate import upgrade
from orchestrator.db.models import Assessment, Document, WorkflowRun
from orchestrator.db.session import make_engine
from orchestrator.db.storage import put_bytes
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError
from orchestrator.jobs.interface import JobContext
from workers.ingestion.chunking import chunk_blocks
from workers.ingestion.sandbox import ParserSandbox
from workers.ingestion.service import ingest_documents

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "policies"
BY_SUFFIX = {
    ".pdf": media.PDF,
    ".docx": media.DOCX,
    ".xlsx": media.XLSX,
    ".html": media.HTML,
    ".md": media.MARKDOWN,
}
#: Real files refused by design (encrypted, scanned, empty, title only): not throughput.
REFUSED = {
    "encrypted-openpassword.pdf",
    "image-only-ccittfax.pdf",
    "scanned-skewed.pdf",
    "invalid-header-only.pdf",
    "test_corrupted.docx",
    "AwesomeCloud-IRP.docx",
    "privacy.md",
}
_VOCABULARY = (
    "access control policy review quarterly owner approve encrypt backup restore "
    "incident response escalate vendor risk assess monitor log alert patch "
    "vulnerability asset inventory classify retain dispose train awareness "
    "privileged account authentication factor network segment firewall change"
)
WORDS = _VOCABULARY.split(" ")


# --- the corpus --------------------------------------------------------------------------


def _paragraphs(rng: random.Random, count: int) -> list[str]:
    def sentence() -> str:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 22))).capitalize() + "."

    return [" ".join(sentence() for _ in range(rng.randint(2, 6))) for _ in range(count)]


def _pdf(path: Path, rng: random.Random, pages: int) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    styles = getSampleStyleSheet()
    story: list[object] = []
    for page in range(pages):
        story.append(Paragraph(f"{page + 1} Section {page + 1}", styles["Heading1"]))
        story.extend(Paragraph(text, styles["BodyText"]) for text in _paragraphs(rng, 7))
        story.append(PageBreak())
    SimpleDocTemplate(str(path), pagesize=A4, title=path.stem, invariant=1).build(story)


def _docx(path: Path, rng: random.Random, sections: int) -> None:
    import docx

    document = docx.Document()
    for number in range(sections):
        document.add_paragraph(f"Section {number + 1}", style="Heading 1")
        for text in _paragraphs(rng, 6):
            document.add_paragraph(text)
    document.save(str(path))


def _xlsx(path: Path, rng: random.Random, rows: int) -> None:
    import openpyxl

    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.append(["Control", "Owner", "Status", "Notes"])
    for number in range(rows):
        sheet.append(
            [f"CTL-{number:04d}", rng.choice(WORDS), rng.choice(WORDS), _paragraphs(rng, 1)[0]]
        )
    workbook.save(str(path))


def _html(path: Path, rng: random.Random, sections: int) -> None:
    body = "".join(
        f"<h2>Section {n}</h2>" + "".join(f"<p>{p}</p>" for p in _paragraphs(rng, 6))
        for n in range(sections)
    )
    path.write_text(
        f"<!doctype html><html><head><title>{path.stem}</title></head>"
        f"<body><h1>{path.stem}</h1>{body}</body></html>"
    )


def build_corpus(directory: Path, scale: int = 1) -> list[Path]:
    """Generated policies in every format, plus the real ones that are meant to ingest."""
    directory.mkdir(parents=True, exist_ok=True)
    rng = random.Random(7)
    makers: list[tuple[str, Callable[[Path, random.Random, int], None], int, int]] = [
        ("pdf", _pdf, 12 * scale, 15),
        ("docx", _docx, 6 * scale, 12),
        ("xlsx", _xlsx, 2 * scale, 400),
        ("html", _html, 6 * scale, 12),
    ]
    paths: list[Path] = []
    for suffix, make, count, size in makers:
        for index in range(count):
            path = directory / f"generated-{index:02d}.{suffix}"
            make(path, rng, size)
            paths.append(path)
    if SHARED.is_dir():
        paths += sorted(
            p for p in SHARED.rglob("*") if p.suffix in BY_SUFFIX and p.name not in REFUSED
        )
    return paths


# --- raw parser libraries ----------------------------------------------------------------


def raw_pdf(path: Path) -> int:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(str(path))
    pages = len(pdf)
    for index in range(pages):
        page = pdf[index]
        textpage = page.get_textpage()
        textpage.get_text_range()
        textpage.close()
        page.close()
    pdf.close()
    return pages


def raw_docx(path: Path) -> int:
    import docx

    document = docx.Document(str(path))
    for item in document.iter_inner_content():
        if hasattr(item, "rows"):
            [cell.text for row in item.rows for cell in row.cells]
        else:
            item.text  # noqa: B018 - the property does the work
    return 0


def raw_html(path: Path) -> int:
    import lxml.html

    lxml.html.document_fromstring(path.read_bytes()).text_content()
    return 0


def raw_xlsx(path: Path) -> int:
    import openpyxl

    with path.open("rb") as handle:
        workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        for sheet in workbook.worksheets:
            for _ in sheet.iter_rows(values_only=True):
                pass
        workbook.close()
    return 0


def raw_markdown(path: Path) -> int:
    path.read_bytes().decode("utf-8")  # no library: the baseline is reading the text
    return 0


RAW = {
    media.PDF: raw_pdf,
    media.DOCX: raw_docx,
    media.HTML: raw_html,
    media.XLSX: raw_xlsx,
    media.MARKDOWN: raw_markdown,
}
RAW_NAMES = {
    media.PDF: "pypdfium2",
    media.DOCX: "python-docx",
    media.HTML: "lxml.html",
    media.XLSX: "openpyxl",
    media.MARKDOWN: "(none: decode only)",
}


# --- measuring ---------------------------------------------------------------------------


@dataclass
class Timing:
    wall: float
    cpu: float
    pages: int


def _child_cpu(pid: int | None) -> float:
    """CPU seconds of the parser process so far (Linux /proc)."""
    if pid is None:
        return 0.0
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = int(fields[11]) + int(fields[12])
    return ticks / 100.0


def _child_peak_kib(pid: int | None) -> int:
    if pid is None:
        return 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def raw_total(reader: Callable[[Path], int], paths: list[Path]) -> int:
    return sum(reader(p) for p in paths)


def timed(run: Callable[[], int], sandbox: ParserSandbox | None = None) -> Timing:
    pid = sandbox.pid if sandbox else None
    child_before = _child_cpu(pid)
    cpu_before, wall_before = time.process_time(), time.perf_counter()
    pages = run()
    wall, cpu = time.perf_counter() - wall_before, time.process_time() - cpu_before
    if sandbox is not None:
        cpu += _child_cpu(sandbox.pid) - child_before if sandbox.pid == pid else 0.0
    return Timing(wall, cpu, pages)


def pipeline(sandbox: ParserSandbox, paths: list[Path]) -> int:
    pages = 0
    files = [(path, BY_SUFFIX[path.suffix]) for path in paths]
    with sandbox.parsing(files) as outcomes:
        for outcome in outcomes:
            if isinstance(outcome, DocumentError):
                raise SystemExit(f"unexpected failure: {outcome.code}: {outcome.message}")
            chunk_blocks(outcome.blocks)
            pages += outcome.pages or 0
    return pages


# --- the whole job on SQLite -------------------------------------------------------------


def _job_session(directory: Path) -> tuple[Session, Assessment, WorkflowRun]:
    url = f"sqlite:///{directory / 'bench.db'}"
    upgrade(url)
    session = Session(make_engine(url), expire_on_commit=False)
    now = utcnow()
    assessment = Assessment(
        tenant_id="bench",
        organization_id="bench",
        name="bench",
        status="in_progress",
        created_by="bench",
        created_at=now,
    )
    session.add(assessment)
    session.flush()
    run = WorkflowRun(
        assessment_id=assessment.id,
        active_assessment_id=assessment.id,
        tenant_id="bench",
        organization_id="bench",
        status="running",
        current_step=None,
        context={},
        version=1,
        trace_id="bench",
        started_by="bench",
        start_idempotency_key=str(uuid.uuid4()),
        start_request_hash="0" * 64,
        created_at=now,
        updated_at=now,
    )
    session.add(run)
    session.commit()
    return session, assessment, run


def prepare_job(directory: Path, paths: list[Path], sandbox: ParserSandbox) -> Callable[[], int]:
    """A fresh assessment with every file stored; returns the job to time: one
    ingest_documents run, committed."""
    session, assessment, run = _job_session(directory)
    storage = directory / "storage"
    for path in paths:
        data = path.read_bytes()
        stored, digest = put_bytes(storage / "documents", data)
        session.add(
            Document(
                tenant_id="bench",
                assessment_id=assessment.id,
                filename=path.name,
                media_type=BY_SUFFIX[path.suffix],
                size_bytes=len(data),
                sha256=digest,
                storage_path=str(stored),
                status="uploaded",
                uploaded_by="bench",
                created_at=utcnow(),
            )
        )
    session.commit()
    request = JobRequest(
        job_id=str(uuid.uuid4()),
        kind=JobKind.INGEST_DOCUMENTS,
        run_id=run.id,
        step=Step.INGEST_DOCUMENTS,
        attempt=1,
        idempotency_key="bench",
        trace_id="bench",
        tenant_id="bench",
        organization_id="bench",
        assessment_id=assessment.id,
        actor_id="bench",
        parameters={},
    )

    def job() -> int:
        result = ingest_documents(
            JobContext(request=request, session=session, storage_dir=storage), sandbox=sandbox
        )
        session.commit()
        session.close()
        if result.summary["failed"]:
            raise SystemExit(f"documents failed: {result.summary['warnings']}")
        return int(result.summary["pages"])

    return job


# --- report ------------------------------------------------------------------------------


def _row(label: str, size: int, timing: Timing, baseline: Timing | None) -> str:
    mb = size / 1e6
    pages = f"{timing.pages / timing.wall:9.1f}" if timing.pages else "        -"
    share = ""
    if baseline is not None:
        share = f"{baseline.wall / timing.wall:7.0%} {baseline.cpu / max(timing.cpu, 1e-9):7.0%}"
    return (
        f"  {label:<22} {mb / timing.wall:8.2f} {pages} {mb / max(timing.cpu, 1e-9):10.2f} {share}"
    )


def best(runs: list[Timing]) -> Timing:
    return min(runs, key=lambda t: t.wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds; best kept")
    parser.add_argument("--scale", type=int, default=1, help="multiplies the generated files")
    add_record_flag(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-ingestion-"))
    paths = build_corpus(work / "corpus", args.scale)
    sandbox = ParserSandbox(IngestionLimits())
    groups: dict[str, list[Path]] = {}
    for path in paths:
        groups.setdefault(BY_SUFFIX[path.suffix], []).append(path)
    kinds = ", ".join(f"{len(files)} {kind.rsplit('/', 1)[-1]}" for kind, files in groups.items())
    real = "included" if SHARED.is_dir() else "absent"
    print(
        f"corpus: {len(paths)} files, {sum(p.stat().st_size for p in paths) / 1e6:.2f} MB "
        f"({kinds}); real policies {real}; best of {args.rounds}"
    )
    print(f"  {'':<22} {'MB/s':>8} {'pages/s':>9} {'MB/CPU-s':>10} {'vs raw (wall, CPU)':>16}")
    pipeline(sandbox, paths)  # warm: parser process started, libraries imported
    for media_type, files in groups.items():
        size = sum(p.stat().st_size for p in files)
        raw_runs: list[Timing] = []
        ours_runs: list[Timing] = []
        reader = RAW[media_type]
        for _ in range(args.rounds):
            raw_runs.append(timed(partial(raw_total, reader, files)))
            ours_runs.append(timed(partial(pipeline, sandbox, files), sandbox))
        raw, ours = best(raw_runs), best(ours_runs)
        print(f"{media_type.rsplit('.', 1)[-1]} ({len(files)} files, {size / 1e6:.2f} MB)")
        print(_row(f"raw {RAW_NAMES[media_type]}", size, raw, None))
        print(_row("ingestion pipeline", size, ours, raw))
    size = sum(p.stat().st_size for p in paths)
    jobs = [
        timed(prepare_job(work / f"job-{n}", paths, sandbox), sandbox)
        for n in range(max(1, args.rounds // 2))
    ]
    print("all formats")
    print(_row("ingest_documents job", size, best(jobs), None))
    job = best(jobs)
    record_if_asked(
        args, "ingestion", [("ingest_documents job, all formats", size / 1e6 / job.wall, "MB/s")]
    )
    peak_self = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(
        f"peak memory: worker {peak_self / 1024:.0f} MiB, parser process "
        f"{_child_peak_kib(sandbox.pid) / 1024:.0f} MiB"
    )
    sandbox.close()


if __name__ == "__main__":
    main()
