"""Media type -> reader. Built-in readers are imported on first use (in the parser
process); plugin modules may register more (`LIFECYCLE_INGEST_READER_PLUGINS`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats import media
from workers.ingestion.parse import ParsedDocument

Reader = Callable[[Path, IngestionLimits], ParsedDocument]

_BUILT_IN: dict[str, str] = {
    media.PDF: "workers.ingestion.readers.pdf:read_pdf",
    media.DOCX: "workers.ingestion.readers.word:read_docx",
    media.XLSX: "workers.ingestion.readers.sheets:read_xlsx",
    media.CSV: "workers.ingestion.readers.sheets:read_csv",
    media.HTML: "workers.ingestion.readers.web:read_html",
    media.MARKDOWN: "workers.ingestion.readers.text:read_markdown",
    media.PLAIN_TEXT: "workers.ingestion.readers.text:read_text",
}
_plugins: dict[str, Reader] = {}
_loaded: set[str] = set()


def register_reader(media_type: str, reader: Reader) -> None:
    _plugins[media_type] = reader


def load_plugins(modules: Iterable[str]) -> None:
    for name in modules:
        if name not in _loaded:
            importlib.import_module(name)
            _loaded.add(name)


def supported_media_types() -> frozenset[str]:
    return frozenset(_BUILT_IN) | frozenset(_plugins)


def reader_for(media_type: str) -> Reader:
    if media_type in _plugins:
        return _plugins[media_type]
    module, function = _BUILT_IN[media_type].split(":")
    reader: Reader = getattr(importlib.import_module(module), function)
    return reader


def read_document(path: Path, media_type: str, limits: IngestionLimits) -> ParsedDocument:
    return reader_for(media_type)(path, limits)
