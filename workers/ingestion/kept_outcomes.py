"""Each document's parsing outcome kept in storage, where any worker of the fleet finds it.

A batch of an ingest_documents job (`workers.ingestion.fan_out`) parses its documents in
whichever ingestion worker took it; the job's own process reads the outcomes back. The key
is what the outcome depends on: the file's checksum, its media type and the ingestion
limits (a changed limit parses again), and the format of what is kept. A file missing or
not matching its checksum is a fact about the storage now, not about the content: never
kept, checked again by the job.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.db.models import Document
from orchestrator.db.storage import content_path, put_at, sha256_hex
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.ahead import Parsed
from workers.ingestion.chunking import chunk_blocks
from workers.ingestion.protocol import document_from_wire, document_to_wire

log = logging.getLogger(__name__)
FORMAT = 1
_NOT_KEPT = {DocumentErrorCode.FILE_MISSING, DocumentErrorCode.CHECKSUM_MISMATCH}


def kept_path(storage_dir: Path, document: Document, limits: IngestionLimits) -> Path:
    key = json.dumps(
        [FORMAT, document.sha256, media.base_media_type(document.media_type)]
        + [limits.model_dump(mode="json")],
        sort_keys=True,
    )
    return content_path(storage_dir / "parsed", sha256_hex(key.encode()), ".json")


def keep(storage_dir: Path, document: Document, limits: IngestionLimits, parsed: Parsed) -> None:
    if parsed.error is not None and parsed.error.code in _NOT_KEPT:
        return
    if parsed.document is not None:
        body: dict[str, Any] = {"document": document_to_wire(parsed.document)}
    else:
        assert parsed.error is not None
        body = {"error": {"code": parsed.error.code.value, "message": parsed.error.message}}
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    put_at(kept_path(storage_dir, document, limits), data)


def kept(storage_dir: Path, document: Document, limits: IngestionLimits) -> Parsed | None:
    """The outcome a batch kept for this document, or None (not parsed yet, or unreadable:
    the job parses it itself)."""
    path = kept_path(storage_dir, document, limits)
    try:
        body = json.loads(path.read_bytes())
        if "error" in body:
            error = DocumentError(
                DocumentErrorCode(body["error"]["code"]), str(body["error"]["message"])
            )
            return Parsed(document.sha256, error=error)
        parsed = document_from_wire(body["document"])
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError):
        log.warning("kept outcome %s is unreadable; parsing %s again", path, document.id)
        return None
    return Parsed(document.sha256, document=parsed, chunks=chunk_blocks(parsed.blocks))
