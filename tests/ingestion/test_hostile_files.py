"""Hostile and broken files: each gets a clear, typed per-document error, and the
worker (and its parser process) keeps serving the documents that follow."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import Document
from orchestrator.formats import media
from orchestrator.formats.archive import check_archive
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from tests.support import documents as files
from tests.support import hostile_readers
from tests.support.services import ACCESS_POLICY, Kit, open_kit
from workers.ingestion.sandbox import ParserSandbox
from workers.ingestion.service import ingest_documents

OLE_ENCRYPTED = (
    b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
    + bytes(504)
    + "EncryptionInfo".encode("utf-16-le")
    + bytes(512)
)


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        yield kit


def _ingest(kit: Kit, sandbox: ParserSandbox) -> dict[str, tuple[str, str | None, str]]:
    context = kit.context(Step.INGEST_DOCUMENTS)
    result = ingest_documents(context, sandbox=sandbox)
    kit.session.commit()
    kit.results[Step.INGEST_DOCUMENTS] = result
    rows = {row.document_id: row for row in kit.session.scalars(select(DocumentOutcome))}
    documents = kit.session.scalars(
        select(Document).where(Document.assessment_id == kit.assessment.id)
    )
    return {d.filename: (d.status, rows[d.id].error_code, d.error or "") for d in documents}


HOSTILE: list[tuple[str, bytes, str, DocumentErrorCode, str]] = [
    (
        "bomb.docx",
        files.docx_bomb(),
        media.DOCX,
        DocumentErrorCode.ARCHIVE_LIMITS,
        "compression ratio",
    ),
    (
        "crowded.xlsx",
        files.docx_many_entries(6000),
        media.XLSX,
        DocumentErrorCode.ARCHIVE_LIMITS,
        "has 6002 entries",
    ),
    (
        "locked.pdf",
        files.pdf_bytes([["Secret policy text"]], password="s3cret"),
        media.PDF,
        DocumentErrorCode.ENCRYPTED,
        "encrypted with a password",
    ),
    ("locked.docx", OLE_ENCRYPTED, media.DOCX, DocumentErrorCode.ENCRYPTED, "password-protected"),
    (
        "scan.pdf",
        files.image_only_pdf(),
        media.PDF,
        DocumentErrorCode.NO_EXTRACTABLE_TEXT,
        "scanned",
    ),
    (
        "header-only.pdf",
        b"%PDF-1.4\n%%EOF\n",
        media.PDF,
        DocumentErrorCode.CORRUPT_FILE,
        "not a readable PDF",
    ),
    (
        "cut.docx",
        files.docx_bytes([("Normal", "text")])[:2000],
        media.DOCX,
        DocumentErrorCode.CORRUPT_FILE,
        "ZIP",
    ),
    (
        "photo.pdf",
        b"\x89PNG\r\n\x1a\n" + bytes(200),
        media.PDF,
        DocumentErrorCode.WRONG_TYPE,
        "the content is a PNG image declared as application/pdf",
    ),
    (
        "sheet.pdf",
        files.xlsx_bytes({"A": [["a", "b"]]}),
        media.PDF,
        DocumentErrorCode.WRONG_TYPE,
        "zip",
    ),
    (
        "word-as-sheet.xlsx",
        files.docx_bytes([("Normal", "Just a letter.")]),
        media.XLSX,
        DocumentErrorCode.CORRUPT_FILE,
        "XLSX",
    ),
    (
        "crash.bin",
        b"other bytes",
        hostile_readers.CRASH,
        DocumentErrorCode.PARSER_CRASHED,
        "SIGSEGV",
    ),
    ("greedy.bin", b"more bytes", hostile_readers.GREEDY, DocumentErrorCode.TOO_LARGE, "memory"),
]


def test_every_hostile_file_fails_alone_with_its_typed_reason(
    kit: Kit, hostile_sandbox: ParserSandbox
) -> None:
    kit.add_document("before.md", ACCESS_POLICY)
    for name, data, media_type, _, _ in HOSTILE:
        kit.add_document(name, data, media_type=media_type)
    kit.add_document("after.md", ACCESS_POLICY.replace("quarter", "month"))
    kit.add_document("empty.md", b"")
    outcomes = _ingest(kit, hostile_sandbox)
    for name, _, _, code, phrase in HOSTILE:
        status, error_code, message = outcomes[name]
        assert (status, error_code) == ("failed", code.value), (name, message)
        assert phrase in message, (name, message)
    assert outcomes["empty.md"][:2] == ("failed", "empty_file")
    # The documents around them were ingested: the worker kept serving.
    assert outcomes["before.md"][:2] == ("ingested", None)
    assert outcomes["after.md"][:2] == ("ingested", None)
    summary = kit.results[Step.INGEST_DOCUMENTS].summary
    assert summary["ingested"] == 2 and summary["failed"] == len(HOSTILE) + 1


def test_an_oversized_file_is_refused_before_parsing(
    kit: Kit, sandbox: ParserSandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit.add_document("small.md", ACCESS_POLICY)
    big = kit.add_document("big.md", "# Big\n" + "word " * 4000)
    monkeypatch.setenv("LIFECYCLE_MAX_DOCUMENT_BYTES", "10000")
    reset_settings()
    try:
        outcomes = _ingest(kit, sandbox)
    finally:
        monkeypatch.delenv("LIFECYCLE_MAX_DOCUMENT_BYTES")
        reset_settings()
    assert outcomes["big.md"][:2] == ("failed", "too_large")
    assert f"{big.size_bytes} bytes exceeds the 10000-byte limit" in outcomes["big.md"][2]
    assert outcomes["small.md"][:2] == ("ingested", None)


@contextmanager
def hang_limit(sandbox: ParserSandbox, seconds: float) -> Iterator[None]:
    """A short time limit for a parser that hangs by design, and only for it: documents
    parsed before and after get the sandbox's usual limit, however slow the machine."""
    usual = sandbox.limits
    sandbox.limits = usual.model_copy(update={"parse_timeout_s": seconds})
    try:
        yield
    finally:
        sandbox.limits = usual


def test_a_hang_or_crash_costs_one_parser_process_not_the_worker(
    tmp_path: Path, hostile_sandbox: ParserSandbox
) -> None:
    good = tmp_path / "good.md"
    good.write_text(ACCESS_POLICY)
    assert hostile_sandbox.parse(good, media.MARKDOWN).has_text
    started, pid = hostile_sandbox.started, hostile_sandbox.pid
    for media_type, code in (
        (hostile_readers.HANG, DocumentErrorCode.PARSE_TIMEOUT),
        (hostile_readers.CRASH, DocumentErrorCode.PARSER_CRASHED),
    ):
        with pytest.raises(DocumentError) as failure, hang_limit(hostile_sandbox, 1):
            hostile_sandbox.parse(good, media_type)
        assert failure.value.code is code
        if code is DocumentErrorCode.PARSE_TIMEOUT:
            assert "longer than 1 s" in failure.value.message
        assert hostile_sandbox.pid is None  # the stuck or dead process is gone
        parsed = hostile_sandbox.parse(good, media.MARKDOWN)  # and a fresh one serves
        assert parsed.has_text and hostile_sandbox.pid not in (None, pid)
    # One for the hang; two for the crash, which is tried once more in a fresh process.
    assert hostile_sandbox.started == started + 3


def test_a_parser_process_killed_while_idle_is_replaced(
    tmp_path: Path, sandbox: ParserSandbox
) -> None:
    import os
    import signal

    good = tmp_path / "good.md"
    good.write_text(ACCESS_POLICY)
    sandbox.parse(good, media.MARKDOWN)
    assert sandbox.pid is not None
    os.kill(sandbox.pid, signal.SIGKILL)
    assert sandbox.parse(good, media.MARKDOWN).has_text


@pytest.mark.parametrize(
    ("limits", "phrase"),
    [
        (IngestionLimits(archive_max_total_bytes=1000), "expands to more than 1000 bytes"),
        (IngestionLimits(archive_max_entry_bytes=1000), "expands to 1024"),
        (IngestionLimits(archive_max_entries=2), "has 3 entries"),
    ],
)
def test_archive_limits_are_checked_on_the_directory(
    tmp_path: Path, limits: IngestionLimits, phrase: str
) -> None:
    path = tmp_path / "doc.docx"
    path.write_bytes(files.zip_with({"a": b"x" * 1024, "b": b"y", "c": b"z"}))
    with path.open("rb") as handle, pytest.raises(DocumentError) as failure:
        check_archive(handle, limits)
    assert failure.value.code is DocumentErrorCode.ARCHIVE_LIMITS
    assert phrase in failure.value.message


def _nested(depth: int) -> str:
    return (
        "<html><body>"
        + "<div>" * depth
        + "deep text"
        + "</div>" * depth
        + "<p>Policy text after the nesting.</p></body></html>"
    )


def test_deep_html_is_read_in_full_or_refused_never_truncated(
    tmp_path: Path, sandbox: ParserSandbox
) -> None:
    path = tmp_path / "deep.html"
    path.write_text(_nested(1000))
    texts = [b.text for b in sandbox.parse(path, media.HTML).blocks]
    assert texts == ["deep text", "Policy text after the nesting."]
    path.write_text(_nested(50_000))
    with pytest.raises(DocumentError) as failure:
        sandbox.parse(path, media.HTML)
    assert failure.value.code is DocumentErrorCode.CORRUPT_FILE
    assert "nests too deeply" in failure.value.message
