"""Page text to paragraphs under headings: running headers and footers dropped, headings
found from the outline (or numbered section titles), wrapped lines joined."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from workers.ingestion.normalise import dropped_characters, normalise_text
from workers.ingestion.parse import BlockBuilder

_DIGITS = re.compile(r"\d+")
_SOFT_HYPHEN = re.compile(r"[\x02\ufffe](\r?\n)?")
_PAGE_NUMBER = re.compile(r"^(page\s*)?\d+(\s*(of|/)\s*\d+)?$", re.IGNORECASE)
_LIST_ITEM = re.compile(r"^(\(([a-z]|[ivxlc]+)\)|([a-z]|[ivxlc]+|\d+)[.)]|[•▪◦‣∙·\-–*])\s")
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+){0,4})\.?\s+([A-Z][^.!?;:]{1,80})$")
_SENTENCE_END = (".", "!", "?", ":", ";")
_EDGE_LINES = 2


@dataclass(frozen=True)
class OutlineEntry:
    level: int
    title: str


def _key(line: str) -> str:
    return " ".join(line.lower().split())


def page_lines(raw: str) -> list[str]:
    """PDFium marks a hyphen it removed at a line break (U+0002 or U+FFFE): rejoin the
    word."""
    text = _SOFT_HYPHEN.sub("", raw).replace("\r\n", "\n").translate(dropped_characters())
    if not text.isascii():
        text = normalise_text(text)  # the full treatment only when it can matter
    return [" ".join(words) for line in text.split("\n") if (words := line.split())]


def strip_running_lines(pages: list[list[str]]) -> list[list[str]]:
    """Drop lines repeated at the top or bottom of most pages (digits ignored, so
    'Page 3' and 'Page 4' match) and bare page numbers."""
    if len(pages) >= 3:
        counts: Counter[str] = Counter()
        for lines in pages:
            edges = {
                _DIGITS.sub("#", _key(line)) for line in lines[:_EDGE_LINES] + lines[-_EDGE_LINES:]
            }
            counts.update(edges)
        running = {key for key, seen in counts.items() if seen >= max(3, len(pages) * 0.6)}
    else:
        running = set()
    return [_strip_edges(lines, running) for lines in pages]


def _strip_edges(lines: list[str], running: set[str]) -> list[str]:
    def removable(line: str) -> bool:
        return bool(_PAGE_NUMBER.match(line)) or _DIGITS.sub("#", _key(line)) in running

    start, end = 0, len(lines)
    while start < min(end, _EDGE_LINES) and removable(lines[start]):
        start += 1
    while end > max(start, len(lines) - _EDGE_LINES) and removable(lines[end - 1]):
        end -= 1
    return lines[start:end]


class HeadingMatcher:
    """Outline titles, optionally preceded by a section number, are headings; without an
    outline, numbered section titles ('2.1 Scope') are."""

    def __init__(
        self, outline: Sequence[OutlineEntry], title: str | None, first_lines: Sequence[str] = ()
    ) -> None:
        self.by_title = {
            _key(entry.title): entry.level + 1 for entry in outline if entry.title.strip()
        }
        self.title = _key(title) if title else None
        self.title_text = title
        self.title_on_first_page = self.title is not None and self.title in {
            _key(line) for line in first_lines
        }
        self.use_numbers = not self.by_title
        # A heading line is its title, perhaps after a section number like "12.3.4".
        self.longest = max((len(title) for title in self.by_title), default=90) + 12

    def level(self, line: str) -> int | None:
        if len(line) > self.longest or not (self.by_title or line[:1].isdigit()):
            return None  # most lines are body text: reject them cheaply
        key = _key(line)
        if key in self.by_title:
            return self.by_title[key]
        numbered = _NUMBERED_HEADING.match(line)
        if numbered and self.by_title:
            return self.by_title.get(_key(numbered.group(2)))
        if numbered and self.use_numbers and len(line.split()) <= 10:
            return numbered.group(1).count(".") + 1
        return None


def build_blocks(pages: list[list[str]], matcher: HeadingMatcher) -> BlockBuilder:
    builder = BlockBuilder(separator=" ")
    if matcher.title and matcher.title_on_first_page:
        # The title often doubles as the running header: it heads the whole document.
        builder.heading(0, matcher.title_text or "")
    for number, lines in enumerate(pages, start=1):
        builder.flush()
        builder.page = number
        typical = _typical_length(lines)
        for index, line in enumerate(lines):
            _feed(
                builder,
                matcher,
                line,
                lines[index - 1] if index else "",
                typical,
                first_page_line=number == 1 and index == 0,
            )
    builder.flush()
    return builder


def _feed(
    builder: BlockBuilder,
    matcher: HeadingMatcher,
    line: str,
    previous: str,
    typical: int,
    *,
    first_page_line: bool,
) -> None:
    if first_page_line and matcher.title and _key(line) == matcher.title:
        return
    level = matcher.level(line)
    if level is not None:
        builder.heading(level, line)
        return
    if builder.paragraph and _starts_paragraph(line, previous, typical):
        builder.flush()
    if builder.paragraph and builder.paragraph[-1].endswith("-"):
        builder.paragraph[-1] = builder.paragraph[-1] + line  # "system-" + "level"
    else:
        builder.paragraph.append(line)


def _starts_paragraph(line: str, previous: str, typical: int) -> bool:
    if _LIST_ITEM.match(line):
        return True
    return previous.endswith(_SENTENCE_END) and len(previous) < typical * 0.8


def _typical_length(lines: list[str]) -> int:
    lengths = sorted(len(line) for line in lines)
    return lengths[len(lengths) * 3 // 4] if lengths else 0
