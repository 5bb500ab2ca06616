"""Spreadsheets: XLSX (one heading per sheet) and CSV."""

from __future__ import annotations

import csv
import zipfile
from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats import media
from orchestrator.formats.archive import check_archive
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.parse import BlockBuilder, Metadata, ParsedDocument
from workers.ingestion.readers.rows import add_rows
from workers.ingestion.readers.text import decoded


def read_xlsx(path: Path, limits: IngestionLimits) -> ParsedDocument:
    import openpyxl  # imported in the parser process only
    from openpyxl.utils.exceptions import InvalidFileException

    with path.open("rb") as handle:
        check_archive(handle, limits)
        handle.seek(0)
        # A file object, not the path: stored files have no .xlsx suffix to check.
        try:
            workbook = openpyxl.load_workbook(handle, read_only=True, data_only=True)
        except (zipfile.BadZipFile, InvalidFileException, KeyError, ValueError, OSError) as error:
            raise DocumentError(
                DocumentErrorCode.CORRUPT_FILE, f"not a readable XLSX workbook ({error})"
            ) from error
        builder, budget = BlockBuilder(), [limits.max_text_chars]
        metadata: Metadata = {"sheets": list(workbook.sheetnames)}
        try:
            for sheet in workbook.worksheets:
                builder.heading(1, sheet.title)
                add_rows(builder, sheet.iter_rows(values_only=True), limits, budget)
            title = workbook.properties.title
        finally:
            workbook.close()
    if title:
        metadata["title"] = str(title)
    return builder.result(metadata)


def read_csv(path: Path, limits: IngestionLimits) -> ParsedDocument:
    text = decoded(path, limits, media.CSV)
    sample = text[:16384]
    try:
        dialect: type[csv.Dialect] | csv.Dialect = csv.Sniffer().sniff(sample, ",;\t|")
    except csv.Error:
        dialect = csv.excel
    builder = BlockBuilder()
    csv.field_size_limit(limits.max_text_chars)
    try:
        header = add_rows(
            builder, csv.reader(text.splitlines(), dialect), limits, [limits.max_text_chars]
        )
    except csv.Error as error:
        raise DocumentError(DocumentErrorCode.CORRUPT_FILE, f"unreadable CSV ({error})") from error
    return builder.result({"columns": header} if header else {})
