"""ZIP containers (DOCX, XLSX) checked before anything is extracted from them.

A zip bomb is refused on the numbers its directory declares: entry count (read from the
end record before the directory is even parsed), total and per-entry uncompressed size,
and compression ratio. Python's zipfile never inflates an entry past its declared size,
so the declared numbers bound what any later extraction can produce.
"""

from __future__ import annotations

import struct
import zipfile
from typing import BinaryIO

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode

_EOCD = b"PK\x05\x06"
_ZIP64_LOCATOR = b"PK\x06\x07"
_ZIP64_EOCD = b"PK\x06\x06"
_TAIL = 22 + 65535 + 20  # end record + longest comment + zip64 locator


def declared_entry_count(handle: BinaryIO) -> int:
    """Entry count from the end-of-central-directory record, without reading the directory."""
    handle.seek(0, 2)
    size = handle.tell()
    handle.seek(max(0, size - _TAIL))
    tail = handle.read()
    at = tail.rfind(_EOCD)
    if at < 0 or len(tail) < at + 22:
        raise _corrupt("no ZIP end record")
    (entries,) = struct.unpack_from("<H", tail, at + 10)
    if entries != 0xFFFF:
        return int(entries)
    locator = tail.rfind(_ZIP64_LOCATOR, 0, at)
    if locator < 0:
        raise _corrupt("ZIP64 end record missing")
    (offset,) = struct.unpack_from("<Q", tail, locator + 8)
    handle.seek(offset)
    record = handle.read(56)
    if len(record) < 56 or not record.startswith(_ZIP64_EOCD):
        raise _corrupt("ZIP64 end record unreadable")
    (count,) = struct.unpack_from("<Q", record, 32)
    return int(count)


def check_archive(handle: BinaryIO, limits: IngestionLimits) -> list[str]:
    """Raise ARCHIVE_LIMITS (or CORRUPT_FILE) unless the container is safe to open;
    returns its entry names."""
    entries = declared_entry_count(handle)
    if entries > limits.archive_max_entries:
        raise _limits(f"has {entries} entries (limit {limits.archive_max_entries})")
    handle.seek(0)
    try:
        with zipfile.ZipFile(handle) as archive:
            infos = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError, OSError) as error:
        raise _corrupt(str(error)) from error
    total = 0
    for info in infos:
        _check_entry(info, limits)
        total += info.file_size
        if total > limits.archive_max_total_bytes:
            raise _limits(f"expands to more than {limits.archive_max_total_bytes} bytes")
    return [info.filename for info in infos]


def _check_entry(info: zipfile.ZipInfo, limits: IngestionLimits) -> None:
    if info.file_size > limits.archive_max_entry_bytes:
        raise _limits(
            f"entry {info.filename!r} expands to {info.file_size} bytes "
            f"(limit {limits.archive_max_entry_bytes})"
        )
    if info.file_size > limits.archive_ratio_floor_bytes:
        ratio = info.file_size / max(info.compress_size, 1)
        if ratio > limits.archive_max_ratio:
            raise _limits(
                f"entry {info.filename!r} has a compression ratio of {ratio:.0f}:1 "
                f"(limit {limits.archive_max_ratio:.0f}:1)"
            )
    if info.flag_bits & 0x1:
        raise DocumentError(DocumentErrorCode.ENCRYPTED, "the archive's entries are encrypted")


def _limits(detail: str) -> DocumentError:
    return DocumentError(
        DocumentErrorCode.ARCHIVE_LIMITS, f"refused before extraction: the archive {detail}"
    )


def _corrupt(detail: str) -> DocumentError:
    return DocumentError(DocumentErrorCode.CORRUPT_FILE, f"not a readable ZIP container ({detail})")
