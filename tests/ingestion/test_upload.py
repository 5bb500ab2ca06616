"""Upload checks: the type comes from the content (the name only picks a text flavour),
and what can never be ingested is refused before anything is stored."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.formats import media
from orchestrator.service.documents import upload_document, upload_document_file
from orchestrator.service.producer import create_assessment
from tests.support import documents as files

OWNER = Actor("tenant-u", "user:owner")
OLE = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1024)


def _no_kick(run_id: object) -> None:
    return None


@pytest.fixture
def assessment_id(embedded: Path) -> uuid.UUID:
    return create_assessment(OWNER, "org", "Uploads").id


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("policy.pdf", files.pdf_bytes([["Access policy"]]), media.PDF),
        ("policy.bin", files.pdf_bytes([["Named wrongly"]]), media.PDF),
        ("policy.docx", files.docx_bytes([("Normal", "Access policy")]), media.DOCX),
        ("policy.pdf", files.docx_bytes([("Normal", "A DOCX named .pdf")]), media.DOCX),
        ("register.xlsx", files.xlsx_bytes({"S": [["a", "b"], ["1", "2"]]}), media.XLSX),
        ("page.txt", b"<!DOCTYPE html><html><body><p>x</p></body></html>", media.HTML),
        ("page.html", b"  <html lang='en'><p>x</p></html>", media.HTML),
        ("notes.md", b"# Title\n\nText.", media.MARKDOWN),
        ("notes.txt", b"---\ntitle: Front matter\n---\n# Title\n", media.MARKDOWN),
        ("notes.txt", b"Plain words.\n", media.PLAIN_TEXT),
        ("table.csv", b"control,status\nIAC-06,done\nBCD-11,planned\n", media.CSV),
        ("prose.csv", b"Just one sentence, with a comma.", media.PLAIN_TEXT),
        ("legacy.txt", "naïve café policy".encode("cp1252"), media.PLAIN_TEXT),
    ],
)
def test_the_content_decides_the_type(
    assessment_id: uuid.UUID, name: str, content: bytes, expected: str
) -> None:
    view = upload_document(OWNER, assessment_id, name, content, kick=_no_kick)
    assert view.media_type == expected


@pytest.mark.parametrize(
    ("name", "content", "reason", "phrase"),
    [
        ("empty.md", b"", "empty_file", "empty"),
        ("photo.pdf", b"\x89PNG\r\n\x1a\n" + bytes(64), "unsupported_type", "PNG image"),
        ("old.doc", OLE, "unsupported_type", "legacy Office 97-2003"),
        (
            "locked.docx",
            OLE[:512] + "EncryptionInfo".encode("utf-16-le"),
            "encrypted",
            "password-protected",
        ),
        ("bomb.docx", files.docx_bomb(), "archive_limits", "compression ratio"),
        ("archive.zip", files.zip_with({"a.txt": b"hello"}), "unsupported_type", "ZIP archive"),
        ("catalog.json", b'{"catalog": {"controls": []}}', "unsupported_type", "JSON"),
        ("data.xml", b"<?xml version='1.0'?><root/>", "unsupported_type", "XML"),
        ("noise.txt", bytes(range(1, 32)) * 20, "unsupported_type", "binary"),
    ],
)
def test_what_can_never_be_ingested_is_refused_with_a_reason(
    assessment_id: uuid.UUID, embedded: Path, name: str, content: bytes, reason: str, phrase: str
) -> None:
    with pytest.raises(InvalidInput) as failure:
        upload_document(OWNER, assessment_id, name, content, kick=_no_kick)
    assert failure.value.details["reason"] == reason
    assert name in failure.value.message and phrase in failure.value.message
    assert not (embedded / "storage" / "documents").exists() or not any(
        p.is_file() for p in (embedded / "storage" / "documents").rglob("*")
    )


def test_a_streamed_upload_is_typed_and_stored_without_loading_it(
    assessment_id: uuid.UUID, embedded: Path, tmp_path: Path
) -> None:
    data = files.xlsx_bytes({"Risks": [["risk", "owner"], ["ransomware", "CISO"]]})
    received = tmp_path / "upload-123"
    received.write_bytes(data)
    view = upload_document_file(
        OWNER,
        assessment_id,
        "risks.xlsx",
        received,
        declared_media_type="application/zip",
        kick=_no_kick,
    )
    assert (view.media_type, view.size_bytes, view.duplicate) == (media.XLSX, len(data), False)
    stored = embedded / "storage" / "documents" / view.sha256[:2] / view.sha256[2:4]
    assert (stored / view.sha256).read_bytes() == data
    assert not [
        p for p in (embedded / "storage" / "documents").iterdir() if p.name.startswith(".part-")
    ]
    again = upload_document(OWNER, assessment_id, "copy.xlsx", data, kick=_no_kick)
    assert (again.id, again.duplicate) == (view.id, True)


def test_a_declared_type_must_agree_with_the_content(
    assessment_id: uuid.UUID, tmp_path: Path
) -> None:
    received = tmp_path / "upload"
    received.write_bytes(files.pdf_bytes([["A real PDF"]]))
    with pytest.raises(InvalidInput) as failure:
        upload_document_file(
            OWNER,
            assessment_id,
            "policy.docx",
            received,
            declared_media_type=media.DOCX,
            kick=_no_kick,
        )
    assert failure.value.details["detected_media_type"] == media.PDF
    view = upload_document_file(
        OWNER,
        assessment_id,
        "policy.docx",
        received,
        declared_media_type="application/octet-stream",
        kick=_no_kick,
    )
    assert view.media_type == media.PDF
