"""Where a chart's shapes go: one horizontal bar per domain or framework, its label on the
left, its segments stacked left to right, its total at the end, a legend below. The
coordinates run top-down (as SVG's); the SVG template, the PDF and the PNG each draw
these same shapes, so the charts agree wherever the report is read."""

from __future__ import annotations

from dataclasses import dataclass

from workers.reporting.charts import Chart

WIDTH = 720
LABEL_WIDTH = 260
BAR_WIDTH = 400
ROW = 20
BAR_HEIGHT = 14
TOP = 8
LEGEND_ROW = 18
FONT_SIZE = 10
TRACK = "#eef1f4"


@dataclass(frozen=True)
class Box:
    x: float
    y: float
    width: float
    height: float
    colour: str
    label: str
    """The bar and the segment it is of ("AST Asset Management: Level 2")."""
    value: int


@dataclass(frozen=True)
class Text:
    x: float
    y: float
    """The baseline."""
    text: str
    anchor: str = "start"
    """"start" or "end", as SVG's text-anchor."""


@dataclass(frozen=True)
class Layout:
    width: float
    height: float
    boxes: tuple[Box, ...]
    """The bars' segments, each with its value."""
    keys: tuple[Box, ...]
    """The legend's swatches."""
    tracks: tuple[Box, ...]
    """Each bar's full scale, drawn behind it: a bar of 0 still shows its room."""
    texts: tuple[Text, ...]


def layout(chart: Chart) -> Layout:
    boxes: list[Box] = []
    keys: list[Box] = []
    tracks: list[Box] = []
    texts: list[Text] = []
    unit = BAR_WIDTH / chart.scale if chart.scale else 0.0
    y = TOP
    for bar in chart.bars:
        texts.append(Text(LABEL_WIDTH - 6, y + BAR_HEIGHT - 3, _short(bar.label), "end"))
        tracks.append(Box(LABEL_WIDTH, y, BAR_WIDTH, BAR_HEIGHT, TRACK, bar.label, 0))
        x = float(LABEL_WIDTH)
        for segment in bar.segments:
            if segment.value:
                width = segment.value * unit
                name = f"{bar.label}: {segment.label} {segment.value}"
                boxes.append(Box(x, y, width, BAR_HEIGHT, segment.colour, name, segment.value))
                x += width
        end = max(x, LABEL_WIDTH + BAR_WIDTH)
        texts.append(Text(end + 4, y + BAR_HEIGHT - 3, str(bar.total)))
        y += ROW
    y += 6
    x = 8.0
    for label, colour in chart.legend:
        room = 24 + 6.2 * len(label)
        if x + room > WIDTH:  # the legend wraps rather than leave the picture
            x, y = 8.0, y + LEGEND_ROW
        keys.append(Box(x, y, 10, 10, colour, label, 0))
        texts.append(Text(x + 14, y + 9, label))
        x += room
    return Layout(WIDTH, y + LEGEND_ROW, tuple(boxes), tuple(keys), tuple(tracks), tuple(texts))


def _short(label: str, room: int = 40) -> str:
    return label if len(label) <= room else label[: room - 1] + "…"
