"""A chart as a ReportLab drawing, for the PDF: the shapes chart_layout placed, as vectors,
shrunk to fit the room given (a drawing is one flowable and never splits across pages)."""

from __future__ import annotations

from typing import Any

from workers.reporting.chart_layout import FONT_SIZE, Layout


def chart_drawing(shapes: Layout, font: str, width: float, height: float) -> Any:
    from reportlab.graphics.shapes import Drawing, Group, Rect, String

    scale = min(1.0, width / shapes.width, height / shapes.height)
    group = Group()
    top = shapes.height  # the layout runs top-down, a PDF bottom-up
    for box in (*shapes.tracks, *shapes.boxes, *shapes.keys):
        group.add(
            Rect(
                box.x,
                top - box.y - box.height,
                box.width,
                box.height,
                fillColor=box.colour,
                strokeColor=None,
            )
        )
    for text in shapes.texts:
        group.add(
            String(
                text.x,
                top - text.y,
                text.text,
                fontName=font,
                fontSize=FONT_SIZE,
                fillColor="#1b1f24",
                textAnchor=text.anchor,
            )
        )
    group.scale(scale, scale)
    drawing = Drawing(shapes.width * scale, shapes.height * scale)
    drawing.add(group)
    return drawing
