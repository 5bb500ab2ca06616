"""Uploading documents: checked on their content, stored by hash, announced to the run."""

from __future__ import annotations

import uuid
from pathlib import Path

from sqlalchemy import select

from orchestrator import fleet
from orchestrator.clock import utcnow
from orchestrator.contracts.signals import SignalType
from orchestrator.db.models import Document, WorkflowRun
from orchestrator.db.session import transaction
from orchestrator.errors import InvalidInput
from orchestrator.inbox import insert_signal
from orchestrator.producer import Actor, Kick, _envelope, load_assessment
from orchestrator.settings import get_settings
from orchestrator.storage import put_bytes, sha256_hex
from orchestrator.views import DocumentView

#: Media types the ingestion workers parse today.
TEXT_MEDIA_TYPES = {".md": "text/markdown", ".markdown": "text/markdown", ".txt": "text/plain"}


def sniff_text_media_type(filename: str, content: bytes) -> str:
    """Decide the type from the bytes; the file name only picks between text flavours."""
    if not content:
        raise InvalidInput(f"{filename}: the file is empty")
    if b"\x00" in content[:8192]:
        raise InvalidInput(f"{filename}: binary content is not a supported text document")
    try:
        content.decode("utf-8")
    except UnicodeDecodeError as error:
        raise InvalidInput(f"{filename}: text documents must be UTF-8") from error
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    return TEXT_MEDIA_TYPES.get(suffix, "text/plain")


def upload_document(actor: Actor, assessment_id: uuid.UUID, filename: str, content: bytes, *,
                    kick: Kick = fleet.kick) -> DocumentView:
    filename = filename.strip().replace("/", "_").replace("\\", "_")[:500]
    if not filename:
        raise InvalidInput("a document needs a file name")
    limit = get_settings().max_document_bytes
    if len(content) > limit:
        raise InvalidInput(f"{filename}: {len(content)} bytes exceeds the {limit}-byte limit")
    media_type = sniff_text_media_type(filename, content)
    digest = sha256_hex(content)
    # The file lands before the row: a crash leaves an orphan file, never a row without one.
    path, _ = put_bytes(get_settings().resolved_storage_dir / "documents", content)
    with transaction() as session:
        assessment = load_assessment(session, actor, assessment_id)
        existing = session.scalar(select(Document).where(
            Document.assessment_id == assessment_id, Document.sha256 == digest))
        if existing is not None:
            return _view(existing, duplicate=True)
        document = Document(
            tenant_id=actor.tenant_id, assessment_id=assessment.id, filename=filename,
            media_type=media_type, size_bytes=len(content), sha256=digest,
            storage_path=str(path), status="uploaded", uploaded_by=actor.actor_id,
            created_at=utcnow())
        session.add(document)
        session.flush()
        run = session.scalar(select(WorkflowRun).where(
            WorkflowRun.active_assessment_id == assessment_id))
        if run is not None:
            insert_signal(session, _envelope(
                run, actor.actor_id, SignalType.DOCUMENTS_UPLOADED,
                f"documents_uploaded:{document.id}", run.trace_id,
                payload={"document_id": str(document.id)}))
        view = _view(document)
    if run is not None:
        kick(run.id)
    return view


def _view(row: Document, duplicate: bool = False) -> DocumentView:
    return DocumentView(id=row.id, filename=row.filename, media_type=row.media_type,
                        size_bytes=row.size_bytes, sha256=row.sha256, status=row.status,
                        duplicate=duplicate)


#: Declared types that say nothing about the content.
_UNDECLARED = {"", "application/octet-stream"}
_TEXT_FAMILY = {"text/plain", "text/markdown", "text/x-markdown"}


def upload_document_file(actor: Actor, assessment_id: uuid.UUID, filename: str, path: Path, *,
                         declared_media_type: str | None = None,
                         kick: Kick = fleet.kick) -> DocumentView:
    """Upload a document received into a file (the HTTP API streams uploads to disk).

    A declared media type must agree with what the content is; the content decides.
    """
    content = path.read_bytes()
    declared = (declared_media_type or "").split(";", 1)[0].strip().lower()
    if declared not in _UNDECLARED:
        sniffed = sniff_text_media_type(filename, content)
        if declared != sniffed and not {declared, sniffed} <= _TEXT_FAMILY:
            raise InvalidInput(f"{filename}: declared as {declared} but the content is "
                               f"{sniffed}", declared_media_type=declared,
                               detected_media_type=sniffed)
    return upload_document(actor, assessment_id, filename, content, kick=kick)
