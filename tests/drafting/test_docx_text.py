"""The DOCX export writes cell and paragraph text in pieces and looks styles up once; the
XML is what python-docx's own setters write."""

from __future__ import annotations

from typing import Any

import pytest
from docx import Document
from lxml import etree

from workers.reporting.docx_export import _paragraph, _put

TEXTS = [
    "Access rights are reviewed quarterly.",
    "  leading and trailing spaces  ",
    "a\ttab, a\nnew line, a\r\nWindows line end and a lone \r",
    "\n\tstarts and ends with breaks\t\n",
    "",
    "ünïcödé — “quoted” ‘text’",
]


def _xml(element: Any) -> bytes:
    return bytes(etree.tostring(element))


@pytest.mark.parametrize("text", TEXTS)
def test_a_cell_holds_what_python_docx_writes(text: str) -> None:
    theirs, ours = (Document().add_table(rows=1, cols=1).rows[0] for _ in range(2))
    theirs.cells[0].text = text
    _put(ours._tr.tc_lst[0], text)
    assert _xml(ours._tr) == _xml(theirs._tr)
    assert ours.cells[0].text == theirs.cells[0].text


@pytest.mark.parametrize("style", [None, "Quote", "Heading 3"])
@pytest.mark.parametrize("text", TEXTS)
def test_a_paragraph_holds_what_python_docx_writes(text: str, style: str | None) -> None:
    theirs, ours = Document(), Document()
    if style == "Heading 3":
        theirs.add_heading(text, level=3)
    else:
        theirs.add_paragraph(text, style=style)
    _paragraph(ours, text, ours.styles[style].style_id if style else None)
    assert _xml(ours.paragraphs[-1]._p) == _xml(theirs.paragraphs[-1]._p)
