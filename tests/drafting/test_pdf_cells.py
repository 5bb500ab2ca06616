"""A report table's cell breaks its lines once per width: a table asks a cell's size when
it measures, splits and draws, and each breaking was most of a long report's time."""

from __future__ import annotations

import pytest
from reportlab.lib.styles import ParagraphStyle
from reportlab.platypus import Paragraph

from workers.reporting import pdf

TEXT = "Access rights are reviewed quarterly by each system owner and revoked on leaving " * 4


def test_a_cell_breaks_its_lines_once_per_width(monkeypatch: pytest.MonkeyPatch) -> None:
    cell = pdf._cell_class()(TEXT, ParagraphStyle("cell", fontSize=7.5, leading=9))
    breaks: list[float] = []
    original = Paragraph.breakLines

    def counted(self: object, widths: list[float]) -> object:
        breaks.append(widths[0])
        return original(self, widths)

    monkeypatch.setattr(Paragraph, "breakLines", counted)

    narrow = [cell.wrap(120, 1000) for _ in range(3)]
    wide = cell.wrap(400, 1000)
    again = cell.wrap(120, 1000)

    assert breaks == [120, 400, 120]  # the same width thrice is one breaking
    assert narrow[0] == narrow[1] == narrow[2] == again and narrow[0][1] > wide[1]
    # A split's parts are cells of their own, each with its lines.
    top, rest = cell.split(120, 3 * 9)
    assert top.wrap(120, 1000)[1] == 3 * 9
    assert rest.wrap(120, 1000)[1] == narrow[0][1] - 3 * 9
