"""Each reader on documents made here: structure (headings, pages, tables), metadata, and
the typed errors of its format."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats import media
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from tests.support import documents as files
from workers.ingestion.chunking import chunk_blocks
from workers.ingestion.parse import Block, ParsedDocument
from workers.ingestion.readers.registry import read_document

LIMITS = IngestionLimits()


def _read(
    tmp_path: Path, data: bytes | str, media_type: str, *, limits: IngestionLimits = LIMITS
) -> ParsedDocument:
    path = tmp_path / "document"
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return read_document(path, media_type, limits)


def test_pdf_pages_outline_headings_and_running_lines(tmp_path: Path) -> None:
    pages = [
        ["Backup Policy", "1 Purpose", "Backups protect the company's data."],
        [
            "2 Schedule",
            "Production databases are backed up nightly.",
            "Backups are encrypted and kept offsite.",
        ],
        ["2 Schedule continued", "A restore test is performed every quarter."],
    ]
    data = files.pdf_bytes(
        pages,
        title="Backup Policy",
        header="ACME internal - draft",
        outline=[(0, "Purpose", 0), (0, "Schedule", 1)],
    )
    parsed = _read(tmp_path, data, media.PDF)
    assert parsed.pages == 3 and parsed.metadata["title"] == "Backup Policy"
    assert (
        Block(("Backup Policy", "1 Purpose"), "Backups protect the company's data.", 1)
        in parsed.blocks
    )
    schedule = [b for b in parsed.blocks if b.heading_path == ("Backup Policy", "2 Schedule")]
    assert [b.page for b in schedule] == [2, 3]
    text = " ".join(b.text for b in parsed.blocks)
    assert "ACME internal" not in text  # the running header of every page
    chunks = chunk_blocks(parsed.blocks)
    scheduled = [c for c in chunks if c.heading_path == "Backup Policy > 2 Schedule"]
    assert (scheduled[0].page_start, scheduled[0].page_end) == (2, 3)


def test_pdf_without_outline_uses_numbered_section_titles(tmp_path: Path) -> None:
    data = files.pdf_bytes(
        [["1 Scope", "Applies to all staff.", "1.1 Contractors", "Contractors are included."]]
    )
    parsed = _read(tmp_path, data, media.PDF)
    assert Block(("1 Scope", "1.1 Contractors"), "Contractors are included.", 1) in parsed.blocks


def test_pdf_typed_errors(tmp_path: Path) -> None:
    cases = [
        (files.pdf_bytes([["secret"]], password="pw"), DocumentErrorCode.ENCRYPTED),
        (files.image_only_pdf(), DocumentErrorCode.NO_EXTRACTABLE_TEXT),
        (b"%PDF-1.7\n%%EOF", DocumentErrorCode.CORRUPT_FILE),
    ]
    for data, code in cases:
        with pytest.raises(DocumentError) as failure:
            _read(tmp_path, data, media.PDF)
        assert failure.value.code is code
    with pytest.raises(DocumentError) as failure:
        _read(
            tmp_path, files.pdf_bytes([["a"]] * 3), media.PDF, limits=IngestionLimits(max_pages=2)
        )
    assert failure.value.code is DocumentErrorCode.TOO_LARGE


def test_docx_headings_from_styles_tables_and_metadata(tmp_path: Path) -> None:
    data = files.docx_bytes(
        [
            ("Title", "Access Policy"),
            ("Heading 1", "Scope"),
            ("Normal", "All staff."),
            ("Heading 2", "Contractors"),
            ("Normal", "Contractors too."),
            ("Normal", "  "),
        ],
        table=[["Control", "Owner"], ["MFA", "IT"], ["MFA", "IT"]],
        title="Access Policy",
    )
    parsed = _read(tmp_path, data, media.DOCX)
    assert parsed.metadata["title"] == "Access Policy"
    assert parsed.blocks[0] == Block(("Access Policy", "Scope"), "All staff.")
    assert parsed.blocks[1] == Block(("Access Policy", "Scope", "Contractors"), "Contractors too.")
    assert parsed.blocks[2].text == "Control | Owner\nMFA | IT\nMFA | IT"


def test_docx_with_headings_only_has_no_text(tmp_path: Path) -> None:
    parsed = _read(tmp_path, files.docx_bytes([("Heading 1", "Coming soon")]), media.DOCX)
    assert not parsed.has_text and parsed.headings == 1


def test_xlsx_sheets_are_headings_and_rows_name_their_columns(tmp_path: Path) -> None:
    data = files.xlsx_bytes(
        {
            "Controls": [
                ["Control", "Status", "Owner"],
                ["IAC-06", "Implemented", "IT"],
                [None, None, None],
                ["BCD-11", "Planned", 3.0],
            ],
            "Notes": [["free text only"]],
        }
    )
    parsed = _read(tmp_path, data, media.XLSX)
    assert parsed.metadata["sheets"] == ["Controls", "Notes"]
    assert [(b.heading_path, b.text) for b in parsed.blocks] == [
        (("Controls",), "Control: IAC-06; Status: Implemented; Owner: IT"),
        (("Controls",), "Control: BCD-11; Status: Planned; Owner: 3"),
        (("Notes",), "free text only"),
    ]


def test_csv_with_a_header_and_another_delimiter(tmp_path: Path) -> None:
    parsed = _read(tmp_path, "control;status\nIAC-06;done\nBCD-11;planned\n", media.CSV)
    assert parsed.metadata == {"columns": ["control", "status"]}
    assert [b.text for b in parsed.blocks] == [
        "control: IAC-06; status: done",
        "control: BCD-11; status: planned",
    ]


def test_html_headings_blocks_tables_and_no_scripts(tmp_path: Path) -> None:
    page = """<!doctype html><html><head><title>Policy &amp; Standards</title>
    <meta name="author" content="Security team"><style>p{color:red}</style>
    <script>var secret = "do-not-index";</script></head><body>
    <nav><a href="/">Home</a></nav>
    <h1>Access <em>Policy</em></h1><p>Intro with <b>bold</b>
    text.<br>Second line.</p><!-- a comment -->
    <h2>Reviews</h2><ul><li>Quarterly reviews.</li><li>Owners sign off.</li></ul>
    <table><tr><th>Control</th><th>Owner</th></tr><tr><td>MFA</td><td>IT</td></tr></table>
    <noscript>enable js</noscript><div>Tail text</div></body></html>"""
    parsed = _read(tmp_path, page, media.HTML)
    assert parsed.metadata == {"title": "Policy & Standards", "author": "Security team"}
    assert [(b.heading_path, b.text) for b in parsed.blocks] == [
        (("Access Policy",), "Intro with bold text. Second line."),
        (("Access Policy", "Reviews"), "Quarterly reviews."),
        (("Access Policy", "Reviews"), "Owners sign off."),
        (("Access Policy", "Reviews"), "Control | Owner"),
        (("Access Policy", "Reviews"), "MFA | IT"),
        (("Access Policy", "Reviews"), "Tail text"),
    ]


def test_text_limits_apply_to_every_reader(tmp_path: Path) -> None:
    tight = IngestionLimits(max_text_chars=50)
    cases: list[tuple[str | bytes, str]] = [
        ("# T\n" + "word " * 40, media.MARKDOWN),
        ("<p>" + "word " * 40 + "</p>", media.HTML),
        (files.docx_bytes([("Normal", "word " * 40)]), media.DOCX),
        (files.xlsx_bytes({"S": [["word " * 40]]}), media.XLSX),
    ]
    for data, media_type in cases:
        with pytest.raises(DocumentError) as failure:
            _read(tmp_path, data, media_type, limits=tight)
        assert failure.value.code is DocumentErrorCode.TOO_LARGE, media_type


def test_comply_style_front_matter_without_an_opening_rule(tmp_path: Path) -> None:
    text = (
        "name: Access Policy\nacronym: AP\nsatisfies:\n  TSC:\n    - CC6.1\n---\n\n"
        "# Access Policy\n\n## Purpose\n\nControl access."
    )
    parsed = _read(tmp_path, text, media.MARKDOWN)
    assert parsed.metadata["name"] == "Access Policy"
    assert parsed.metadata["TSC"] == ["CC6.1"]
    assert parsed.blocks == (Block(("Access Policy", "Purpose"), "Control access."),)
