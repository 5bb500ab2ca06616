"""Documents made on the fly, for every format the readers accept (and some they refuse)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence


def docx_bytes(
    paragraphs: Sequence[tuple[str, str]], table: Sequence[Sequence[str]] = (), title: str = ""
) -> bytes:
    """(style, text) paragraphs, e.g. ("Heading 1", "Access Control"), then a table."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    for style, text in paragraphs:
        document.add_paragraph(text, style=style)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def xlsx_bytes(sheets: dict[str, Sequence[Sequence[object]]]) -> bytes:
    import openpyxl

    workbook = openpyxl.Workbook()
    first = True
    for name, rows in sheets.items():
        sheet = workbook.active if first else workbook.create_sheet()
        assert sheet is not None
        sheet.title = name
        first = False
        for row in rows:
            sheet.append(list(row))
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def pdf_bytes(
    pages: Sequence[Sequence[str]],
    *,
    title: str = "",
    outline: Sequence[tuple[int, str, int]] = (),
    header: str = "",
    password: str | None = None,
) -> bytes:
    """One line per string on each page; outline entries are (level, title, page index)."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    encrypt = None
    if password is not None:
        from reportlab.lib.pdfencrypt import StandardEncryption

        encrypt = StandardEncryption(password, ownerPassword=password + "-owner")
    pdf = canvas.Canvas(buffer, pagesize=A4, encrypt=encrypt, invariant=1)
    if title:
        pdf.setTitle(title)
    for index, lines in enumerate(pages):
        for level, heading, page in outline:
            if page == index:
                key = f"o{level}-{heading}"
                pdf.bookmarkPage(key)
                pdf.addOutlineEntry(heading, key, level=level)
        y = 800
        if header:
            pdf.drawString(72, y, header)
            y -= 28
        for line in lines:
            pdf.drawString(72, y, line)
            y -= 16
        pdf.drawString(290, 40, str(index + 1))
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def image_only_pdf() -> bytes:
    """A 'scan': one page with an image and no text."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    picture = Image.new("L", (64, 64), color=128)
    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer, invariant=1)
    pdf.drawImage(ImageReader(picture), 72, 600, width=200, height=200)
    pdf.showPage()
    pdf.save()
    return buffer.getvalue()


def zip_with(entries: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def docx_bomb(expanded_bytes: int = 40 * 1024 * 1024) -> bytes:
    """A DOCX whose document.xml inflates ~1000:1."""
    return zip_with(
        {
            "[Content_Types].xml": b"<Types/>",
            "word/document.xml": b"<w:document>" + b" " * expanded_bytes,
        }
    )


def docx_many_entries(count: int) -> bytes:
    entries = {f"word/media/image{i}.bin": b"x" for i in range(count)}
    return zip_with({"[Content_Types].xml": b"<Types/>", "word/document.xml": b"<x/>", **entries})
