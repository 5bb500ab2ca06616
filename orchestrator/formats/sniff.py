"""What a file is, decided from its bytes. The name only picks between text flavours
(Markdown, CSV, plain text), and only when the content fits the flavour."""

from __future__ import annotations

import codecs
import csv
import re
from typing import BinaryIO

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats import media
from orchestrator.formats.archive import check_archive
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode

HEAD_BYTES = 64 * 1024

PDF_FAMILY, ZIP_FAMILY, OLE_FAMILY, TEXT_FAMILY = "pdf", "zip", "ole", "text"

_OLE_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
_UNSUPPORTED_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"GIF8", "a GIF image"),
    (b"II*\x00", "a TIFF image"),
    (b"MM\x00*", "a TIFF image"),
    (b"{\\rtf", "an RTF document"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"7z\xbc\xaf\x27\x1c", "a 7-Zip archive"),
    (b"Rar!\x1a\x07", "a RAR archive"),
    (b"\x7fELF", "an executable"),
    (b"%!PS", "a PostScript file"),
)
_ENCRYPTION_STREAM = "EncryptionInfo".encode("utf-16-le")
_HTML_START = re.compile(
    rb"^\s*(<!--.*?-->\s*)*<(!doctype\s+html|html[\s>])", re.IGNORECASE | re.DOTALL
)
_HTML_TAGS = re.compile(rb"<(head|body)[\s>]", re.IGNORECASE)
_FRONT_MATTER = re.compile(r"^---\n[A-Za-z0-9_.-]+\s*:")
_SUFFIX_FLAVOURS = {
    ".md": media.MARKDOWN,
    ".markdown": media.MARKDOWN,
    ".csv": media.CSV,
    ".tsv": media.CSV,
    ".txt": media.PLAIN_TEXT,
}


def content_family(head: bytes) -> str:
    """'pdf', 'zip', 'ole' or 'text'; raises UNSUPPORTED_TYPE for known binary formats and
    for content that is evidently binary."""
    if not head:
        raise DocumentError(DocumentErrorCode.EMPTY_FILE, "the file is empty")
    if b"%PDF-" in head[:1024]:
        return PDF_FAMILY
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return ZIP_FAMILY
    if head.startswith(_OLE_MAGIC):
        return OLE_FAMILY
    for magic, name in _UNSUPPORTED_MAGIC:
        if head.startswith(magic):
            raise _unsupported(f"the content is {name}")
    if decode_head(head) is None:
        raise _unsupported("the content is binary, not a supported document")
    return TEXT_FAMILY


def decode_head(head: bytes, *, complete: bool = False) -> str | None:
    """The text of `head` (UTF-8/16, or Windows-1252), or None when it is binary. A cut
    multi-byte character at the end of a partial head is not an error."""
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return head.decode("utf-16", errors="replace")
    if b"\x00" in head:
        return None
    try:
        text = codecs.getincrementaldecoder("utf-8-sig")().decode(head, final=complete)
    except UnicodeDecodeError:
        text = head.decode("cp1252", errors="replace")
    controls = sum(1 for char in text if ord(char) < 32 and char not in "\t\n\r\f\v")
    return None if controls > max(2, len(text) // 100) else text


def ole_verdict(head: bytes) -> DocumentError:
    """An OLE2 container is either an encrypted OOXML file or a legacy Office file."""
    if _ENCRYPTION_STREAM in head:
        return DocumentError(
            DocumentErrorCode.ENCRYPTED,
            "the Office document is password-protected: remove the password and upload it again",
        )
    return _unsupported(
        "the content is a legacy Office 97-2003 file (.doc, .xls): save it as .docx or .xlsx"
    )


def archive_media_type(handle: BinaryIO, limits: IngestionLimits) -> str:
    """DOCX or XLSX by the container's parts; checks the archive's limits first."""
    names = set(check_archive(handle, limits))
    if "word/document.xml" in names:
        return media.DOCX
    if "xl/workbook.xml" in names:
        return media.XLSX
    if any(name.startswith("ppt/") for name in names):
        raise _unsupported("the content is a PowerPoint presentation")
    raise _unsupported("the content is a ZIP archive, not a DOCX or XLSX document")


def sniff_media_type(
    filename: str, head: bytes, archive: BinaryIO | None, *, complete: bool, limits: IngestionLimits
) -> str:
    """The media type to ingest the file as, or a DocumentError saying why not.

    `head` is the first HEAD_BYTES (the whole file when `complete`); `archive` opens the
    whole file for ZIP containers.
    """
    family = content_family(head)
    if family == PDF_FAMILY:
        return media.PDF
    if family == OLE_FAMILY:
        raise ole_verdict(head)
    if family == ZIP_FAMILY:
        if archive is None:
            raise _unsupported("a ZIP container needs the whole file to be checked")
        return archive_media_type(archive, limits)
    return _text_flavour(filename, head, complete)


def _text_flavour(filename: str, head: bytes, complete: bool) -> str:
    if _HTML_START.match(head) or _HTML_TAGS.search(head[:4096]):
        return media.HTML
    text = decode_head(head, complete=complete) or ""
    stripped = text.strip()
    if stripped[:1] in ("{", "[") and (not complete or stripped[-1:] in ("}", "]")):
        raise _unsupported("the content is JSON data, not a document")
    if stripped.startswith("<?xml"):
        raise _unsupported("the content is XML data, not a document")
    suffix = "." + filename.rsplit(".", 1)[-1].lower() if "." in filename else ""
    flavour = _SUFFIX_FLAVOURS.get(suffix, media.PLAIN_TEXT)
    if flavour == media.CSV and not _is_tabular(text):
        return media.PLAIN_TEXT
    if flavour == media.PLAIN_TEXT and _FRONT_MATTER.match(text.replace("\r\n", "\n")):
        return media.MARKDOWN
    return flavour


def _is_tabular(text: str) -> bool:
    lines = [line for line in text.splitlines()[:20] if line.strip()]
    if len(lines) < 2:
        return False
    try:
        dialect = csv.Sniffer().sniff("\n".join(lines), delimiters=",;\t|")
    except csv.Error:
        return False
    widths = {len(row) for row in csv.reader(lines, dialect)}
    return min(widths) >= 2 and max(widths) - min(widths) <= 1


def _unsupported(message: str) -> DocumentError:
    accepted = "PDF, DOCX, XLSX, HTML, Markdown, CSV, plain text"
    return DocumentError(DocumentErrorCode.UNSUPPORTED_TYPE, f"{message} (accepted: {accepted})")
