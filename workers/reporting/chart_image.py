"""A chart as a PNG (Pillow, which ReportLab depends on): for the DOCX, which cannot hold
SVG. It draws the shapes chart_layout placed, at twice their size for sharp print."""

from __future__ import annotations

import io
from functools import lru_cache
from pathlib import Path
from typing import Any

from workers.reporting.chart_layout import FONT_SIZE, Layout

SCALE = 2


@lru_cache(maxsize=1)
def _font() -> Any:
    """ReportLab's bundled Vera (the PDF's font too), else Pillow's own."""
    import reportlab
    from PIL import ImageFont

    vera = Path(reportlab.__file__).parent / "fonts" / "Vera.ttf"
    if vera.exists():
        return ImageFont.truetype(str(vera), FONT_SIZE * SCALE)
    return ImageFont.load_default(FONT_SIZE * SCALE)


def chart_png(shapes: Layout) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (int(shapes.width * SCALE), int(shapes.height * SCALE)), "white")
    draw = ImageDraw.Draw(image)
    for box in (*shapes.tracks, *shapes.boxes, *shapes.keys):
        corner = (box.x * SCALE, box.y * SCALE)
        far = ((box.x + box.width) * SCALE - 1, (box.y + box.height) * SCALE - 1)
        draw.rectangle((corner, far), fill=box.colour)
    font = _font()
    for text in shapes.texts:
        # "ls": the anchor at the text's left baseline, "rs" at its right: as SVG's.
        anchor = "rs" if text.anchor == "end" else "ls"
        draw.text(
            (text.x * SCALE, text.y * SCALE), text.text, fill="#1b1f24", font=font, anchor=anchor
        )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=False)
    return buffer.getvalue()
