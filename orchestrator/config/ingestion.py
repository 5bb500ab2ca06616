"""Limits that keep one hostile document from hurting the worker (env prefix
LIFECYCLE_INGEST_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

MIB = 1024 * 1024


class IngestionLimits(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_INGEST_", env_file=".env", extra="ignore"
    )

    parse_timeout_s: float = Field(
        60.0, gt=0, description="Per document, then the parser process is killed."
    )
    parser_memory_bytes: int = Field(
        2048 * MIB, ge=64 * MIB, description="Address-space limit of the parser process."
    )
    max_pages: int = Field(5000, ge=1)
    max_text_chars: int = Field(20_000_000, ge=1, description="Extracted text per document.")
    archive_max_entries: int = Field(5000, ge=1, description="Entries in a DOCX/XLSX.")
    archive_max_total_bytes: int = Field(
        300 * MIB, ge=1, description="Uncompressed size of all entries."
    )
    archive_max_entry_bytes: int = Field(200 * MIB, ge=1)
    archive_max_ratio: float = Field(
        150.0,
        gt=1,
        description="Uncompressed/compressed, per entry over archive_ratio_floor_bytes.",
    )
    archive_ratio_floor_bytes: int = Field(
        2 * MIB,
        ge=0,
        description="Small entries may compress very well; only larger ones are ratio-checked.",
    )
    reader_plugins: list[str] = Field(
        default_factory=list,
        description="Modules that register extra readers (imported by the parser too).",
    )
