"""PDF through PDFium: text per page, outline for headings, typed errors for encrypted,
malformed and image-only files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.parse import Metadata, ParsedDocument
from workers.ingestion.readers.pdf_layout import (
    HeadingMatcher,
    OutlineEntry,
    build_blocks,
    page_lines,
    strip_running_lines,
)

_MAX_OUTLINE = 2000
_IMAGE_PROBE_PAGES = 5


def read_pdf(path: Path, limits: IngestionLimits) -> ParsedDocument:
    import pypdfium2 as pdfium  # imported in the parser process only

    try:
        pdf = pdfium.PdfDocument(str(path))
    except pdfium.PdfiumError as error:
        raise _open_error(error) from error
    try:
        count = len(pdf)
        if count > limits.max_pages:
            raise DocumentError(
                DocumentErrorCode.TOO_LARGE, f"{count} pages (limit {limits.max_pages})"
            )
        texts = extract_pages(pdf, limits)
        if not any(text.strip() for text in texts):
            raise _no_text(pdf)
        metadata = _metadata(pdf)
        outline = _outline(pdf)
    finally:
        pdf.close()
    lines = [page_lines(text) for text in texts]
    title = metadata.get("title")
    matcher = HeadingMatcher(
        outline, title if isinstance(title, str) else None, first_lines=lines[0][:3]
    )
    return build_blocks(strip_running_lines(lines), matcher).result(metadata, pages=count)


def extract_pages(pdf: Any, limits: IngestionLimits) -> list[str]:
    texts: list[str] = []
    budget = limits.max_text_chars
    for index in range(len(pdf)):
        page = pdf[index]
        try:
            textpage = page.get_textpage()
            texts.append(textpage.get_text_range())
            textpage.close()
        finally:
            page.close()
        budget -= len(texts[-1])
        if budget < 0:
            raise DocumentError(
                DocumentErrorCode.TOO_LARGE, f"more than {limits.max_text_chars} characters of text"
            )
    return texts


def _open_error(error: Exception) -> DocumentError:
    message = str(error)
    if "password" in message.lower():
        return DocumentError(
            DocumentErrorCode.ENCRYPTED,
            "the PDF is encrypted with a password: remove the password and upload it again",
        )
    return DocumentError(DocumentErrorCode.CORRUPT_FILE, f"not a readable PDF ({message})")


def _no_text(pdf: Any) -> DocumentError:
    import pypdfium2.raw as pdfium_c

    for index in range(min(len(pdf), _IMAGE_PROBE_PAGES)):
        page = pdf[index]
        try:
            images = any(
                True for _ in page.get_objects(filter=[pdfium_c.FPDF_PAGEOBJ_IMAGE], max_depth=3)
            )
        finally:
            page.close()
        if images:
            return DocumentError(
                DocumentErrorCode.NO_EXTRACTABLE_TEXT,
                "no extractable text: the PDF is scanned (its pages are "
                "images without a text layer; OCR is not supported)",
            )
    return DocumentError(
        DocumentErrorCode.NO_EXTRACTABLE_TEXT,
        "no extractable text: the PDF's pages contain no text",
    )


def _outline(pdf: Any) -> list[OutlineEntry]:
    entries: list[OutlineEntry] = []
    for bookmark in pdf.get_toc(max_depth=6):
        title = bookmark.get_title()
        if title:
            entries.append(OutlineEntry(int(bookmark.level), str(title)))
        if len(entries) >= _MAX_OUTLINE:
            break
    return entries


def _metadata(pdf: Any) -> Metadata:
    raw = pdf.get_metadata_dict(skip_empty=True)
    names = {
        "Title": "title",
        "Author": "author",
        "Subject": "subject",
        "Keywords": "keywords",
        "CreationDate": "created",
        "ModDate": "modified",
    }
    return {
        names[key]: " ".join(str(value).split())
        for key, value in raw.items()
        if key in names and str(value).strip()
    }
