"""Uploading documents: checked on their content, stored by hash, announced to the run.

The content decides the type (PDF, DOCX, XLSX, HTML, Markdown, CSV, plain text); the
file name only picks between text flavours. Empty files, unknown or legacy formats,
password-protected Office files and ZIP containers over the archive limits are refused
here, before anything is stored. Everything else that can go wrong with a file is found
by the ingestion worker, which records a typed reason per document.
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from sqlalchemy import select
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import DocumentRefused, InvalidInput
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.signals import SignalType
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Document, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.db.storage import put_bytes
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import insert_signal
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError
from orchestrator.formats.sniff import HEAD_BYTES, sniff_media_type
from orchestrator.service.document_waits import UPLOADED, upload_wait
from orchestrator.service.producer import load_assessment, signal_envelope
from orchestrator.service.read_models import DocumentView

#: Declared types that say nothing about the content.
_UNDECLARED = {"", "application/octet-stream", "binary/octet-stream"}
#: Declared types a client may send for each detected type (browsers vary).
_ALIASES: dict[str, frozenset[str]] = {
    media.PDF: frozenset({media.PDF, "application/x-pdf"}),
    media.DOCX: frozenset({media.DOCX, "application/zip", "application/x-zip-compressed"}),
    media.XLSX: frozenset({media.XLSX, "application/zip", "application/x-zip-compressed"}),
}
_COPY_BLOCK = 1 << 20

#: Called in the upload's transaction with a document just recorded (a new version links
#: itself to the one it replaces); returns what to send once that transaction committed.
OnRecorded = Callable[[Session, Document], Callable[[], None]]


def detect_media_type(filename: str, content: bytes) -> str:
    """The media type the content will be ingested as, or InvalidInput saying why not."""
    return _detect(
        filename, content[:HEAD_BYTES], io.BytesIO(content), complete=len(content) <= HEAD_BYTES
    )


def _detect(filename: str, head: bytes, whole: BinaryIO, *, complete: bool) -> str:
    try:
        return sniff_media_type(
            filename, head, whole, complete=complete, limits=get_settings().ingestion
        )
    except DocumentError as error:
        raise DocumentRefused(f"{filename}: {error.message}", reason=error.code.value) from error


def _clean_name(filename: str) -> str:
    require_nul_free(filename=filename)
    filename = filename.strip().replace("/", "_").replace("\\", "_")[:500]
    if not filename:
        raise InvalidInput("a document needs a file name")
    return filename


def _check_size(filename: str, size: int) -> None:
    limit = get_settings().max_document_bytes
    if size > limit:
        raise InvalidInput(
            f"{filename}: {size} bytes exceeds the {limit}-byte limit", reason="too_large"
        )


@retry_busy
def upload_document(
    actor: Actor,
    assessment_id: uuid.UUID,
    filename: str,
    content: bytes,
    *,
    kick: Kick = fleet.kick,
) -> DocumentView:
    filename = _clean_name(filename)
    _check_size(filename, len(content))
    media_type = detect_media_type(filename, content)
    # The file lands before the row: a crash leaves an orphan file, never a row without one.
    path, digest = put_bytes(get_settings().resolved_storage_dir / "documents", content)
    return _record(actor, assessment_id, filename, media_type, len(content), digest, path, kick)


@retry_busy
def upload_document_file(
    actor: Actor,
    assessment_id: uuid.UUID,
    filename: str,
    path: Path,
    *,
    declared_media_type: str | None = None,
    kick: Kick = fleet.kick,
    on_recorded: OnRecorded | None = None,
) -> DocumentView:
    """Upload a document received into a file (the HTTP API streams uploads to disk),
    without reading it into memory. A declared media type must agree with the content;
    the content decides."""
    filename = _clean_name(filename)
    size = path.stat().st_size
    _check_size(filename, size)
    with path.open("rb") as handle:
        head = handle.read(HEAD_BYTES)
        media_type = _detect(filename, head, handle, complete=size <= HEAD_BYTES)
    _check_declared(filename, declared_media_type, media_type)
    stored, digest = _store_file(get_settings().resolved_storage_dir / "documents", path)
    return _record(
        actor, assessment_id, filename, media_type, size, digest, stored, kick, on_recorded
    )


def _check_declared(filename: str, declared_media_type: str | None, detected: str) -> None:
    declared = media.base_media_type(declared_media_type or "")
    if declared in _UNDECLARED or declared == detected:
        return
    if declared.startswith("text/") and detected in media.TEXT_TYPES:
        return  # text flavours are the name's business, not the client's
    if declared in _ALIASES.get(detected, frozenset()):
        return
    raise DocumentRefused(
        f"{filename}: declared as {declared} but the content is {detected}",
        declared_media_type=declared,
        detected_media_type=detected,
        reason="wrong_type",
    )


def _store_file(root: Path, source: Path) -> tuple[Path, str]:
    """Content-addressed like `put_bytes` (root/ab/cd/<sha256>), in one streamed pass:
    copy to a temp file while hashing, then rename it to its hash."""
    root.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp = tempfile.mkstemp(dir=root, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as sink, source.open("rb") as handle:
            while block := handle.read(_COPY_BLOCK):
                digest.update(block)
                sink.write(block)
            sink.flush()
            os.fsync(sink.fileno())
        hexdigest = digest.hexdigest()
        target = root / hexdigest[:2] / hexdigest[2:4] / hexdigest
        if target.exists():
            Path(tmp).unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target, hexdigest


def _record(
    actor: Actor,
    assessment_id: uuid.UUID,
    filename: str,
    media_type: str,
    size: int,
    digest: str,
    path: Path,
    kick: Kick,
    on_recorded: OnRecorded | None = None,
) -> DocumentView:
    after: list[Callable[[], None]] = []
    with transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        existing = session.scalar(
            select(Document).where(
                Document.assessment_id == assessment_id, Document.sha256 == digest
            )
        )
        if existing is not None:
            return _view(session, existing, duplicate=True)
        document = Document(
            tenant_id=actor.tenant_id,
            assessment_id=assessment.id,
            filename=filename,
            media_type=media_type,
            size_bytes=size,
            sha256=digest,
            storage_path=str(path),
            status=UPLOADED,
            uploaded_by=actor.actor_id,
            created_at=utcnow(),
        )
        session.add(document)
        session.flush()
        if on_recorded is not None:
            after.append(on_recorded(session, document))
        run = session.scalar(
            select(WorkflowRun).where(WorkflowRun.active_assessment_id == assessment_id)
        )
        if run is not None:
            insert_signal(
                session,
                signal_envelope(
                    run,
                    actor.actor_id,
                    SignalType.DOCUMENTS_UPLOADED,
                    f"documents_uploaded:{document.id}",
                    run.trace_id,
                    payload={"document_id": str(document.id)},
                ),
            )
        view = _view(session, document)
    if run is not None:
        kick(run.id)
    for send in after:
        send()
    return view


def _view(session: Session, row: Document, duplicate: bool = False) -> DocumentView:
    return DocumentView(
        id=row.id,
        filename=row.filename,
        media_type=row.media_type,
        size_bytes=row.size_bytes,
        sha256=row.sha256,
        status=row.status,
        waiting_for=upload_wait(session, row.assessment_id) if row.status == UPLOADED else None,
        duplicate=duplicate,
    )
