"""Parsed documents as paragraphs under their heading path; the Markdown and plain-text
readers. Every other reader builds its blocks with `BlockBuilder` too."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from orchestrator.db.compute_guard import computing
from workers.ingestion.normalise import normalise_text

MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"

_ATX = re.compile(r"^(#{1,6})\s+(.+?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^(=+|-+)$")
_RULE = re.compile(r"^([-*_])(\s*\1){2,}$")
_FENCE = re.compile(r"^(```|~~~)")
_META_ITEM = re.compile(r"^([A-Za-z0-9_.-]+)\s*:(?:\s+(.*)|)$")
_MAX_FRONT_MATTER_LINES = 500

Metadata = dict[str, str | list[str]]


@dataclass(frozen=True)
class Block:
    """One paragraph (or code block, list) and the headings it sits under."""

    heading_path: tuple[str, ...]
    text: str
    page: int | None = None
    """1-based page the paragraph starts on, for formats that have pages (PDF)."""


@dataclass(frozen=True)
class ParsedDocument:
    metadata: Metadata = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()
    pages: int | None = None
    headings: int = 0
    """How many headings the reader saw: a document of headings alone has no body text."""

    @property
    def has_text(self) -> bool:
        return any(block.text for block in self.blocks)

    @property
    def characters(self) -> int:
        return sum(len(block.text) for block in self.blocks)


def base_media_type(media_type: str) -> str:
    """'text/markdown; charset=utf-8' -> 'text/markdown'."""
    return media_type.split(";", 1)[0].strip().lower()


def parse(text: str, media_type: str) -> ParsedDocument:
    """Parse decoded text as Markdown, or else as plain text."""
    computing("parsing")
    text = normalise_text(text)
    if base_media_type(media_type) != MARKDOWN:
        return _plain_blocks(text).result()
    metadata, body = split_front_matter(text)
    return _markdown_blocks(body).result(metadata)


def split_front_matter(text: str) -> tuple[Metadata, str]:
    """Strip a leading YAML front matter block ('---' ... '---') into flat metadata.

    Only the flat subset documents use in practice is read: `key: value`, inline
    `[a, b]` lists and `- item` lists. An unclosed block is left in the text. Some
    policy tools omit the opening '---': leading `key: value` lines closed by '---'
    are front matter too.
    """
    lines = text.split("\n")
    if not lines:
        return {}, text
    start = 1 if lines[0] == "---" else 0
    if start == 0 and not _META_ITEM.match(lines[0]):
        return {}, text
    for end in range(start, min(len(lines), _MAX_FRONT_MATTER_LINES)):
        if lines[end] in ("---", "...") and end > start:
            return _parse_metadata(lines[start:end]), "\n".join(lines[end + 1 :]).strip()
        if start == 0 and not _is_meta_line(lines[end]):
            break
    return {}, text


def _is_meta_line(line: str) -> bool:
    return not line or line.startswith("- ") or bool(_META_ITEM.match(line))


def _parse_metadata(lines: list[str]) -> Metadata:
    metadata: Metadata = {}
    key: str | None = None
    for line in lines:
        item = _META_ITEM.match(line)
        if item:
            key, value = item.group(1), (item.group(2) or "").strip()
            metadata[key] = _meta_value(value) if value else []
        elif line.startswith("- ") and key is not None:
            current = metadata[key]
            if isinstance(current, list):
                current.append(_unquote(line[2:].strip()))
    return metadata


def _meta_value(value: str) -> str | list[str]:
    if value.startswith("[") and value.endswith("]"):
        return [_unquote(part.strip()) for part in value[1:-1].split(",") if part.strip()]
    return _unquote(value)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


class BlockBuilder:
    """The heading stack, the open paragraph and the blocks so far, for any reader."""

    def __init__(self, separator: str = "\n") -> None:
        self.separator = separator
        """Joins the lines of a paragraph: a newline keeps them, a space reflows them."""
        self.headings: list[tuple[int, str]] = []
        self.paragraph: list[str] = []
        self.blocks: list[Block] = []
        self.page: int | None = None
        self.heading_count = 0

    def flush(self) -> None:
        text = self.separator.join(self.paragraph).strip()
        self.paragraph = []
        if text:
            path = tuple(title for _, title in self.headings)
            self.blocks.append(Block(path, text, self.page))

    def add(self, text: str) -> None:
        """A whole paragraph at once."""
        self.flush()
        self.paragraph = [text]
        self.flush()

    def heading(self, level: int, title: str) -> None:
        self.flush()
        title = " ".join(title.split())
        if not title:
            return
        self.heading_count += 1
        # A heading closes every open heading at its level or deeper.
        self.headings = [(lvl, t) for lvl, t in self.headings if lvl < level]
        self.headings.append((level, title))

    def result(self, metadata: Metadata | None = None, pages: int | None = None) -> ParsedDocument:
        self.flush()
        return ParsedDocument(
            metadata=metadata or {},
            blocks=tuple(self.blocks),
            pages=pages,
            headings=self.heading_count,
        )


class _MarkdownReader(BlockBuilder):
    """Walks lines once, tracking the heading stack and the open paragraph."""

    def __init__(self) -> None:
        super().__init__()
        self.in_fence = False

    def feed(self, line: str) -> None:
        if _FENCE.match(line):
            self.in_fence = not self.in_fence
            self.paragraph.append(line)
        elif self.in_fence:
            self.paragraph.append(line)
        elif not line:
            self.flush()
        elif atx := _ATX.match(line):
            self.heading(len(atx.group(1)), atx.group(2).strip())
        elif self.paragraph and _SETEXT.match(line):
            title = " ".join(self.paragraph)
            self.paragraph = []
            self.heading(1 if line.startswith("=") else 2, title)
        elif _RULE.match(line):
            self.flush()
        else:
            self.paragraph.append(line)


def _looks_like_title(line: str) -> bool:
    return (
        len(line) <= 60
        and len(line.split()) <= 8
        and line[:1].isupper()
        and line[-1:] not in ".,;:!?"
    )


def _plain_blocks(text: str) -> BlockBuilder:
    """Plain text has no markup, but policies still have titles: an ALL-CAPS line is a
    level-1 heading, a short title-like line opening a paragraph a level-2 one. A
    lone short line that ends the document stays text, so nothing is lost."""
    reader = _MarkdownReader()
    paragraphs = [p for p in text.split("\n\n") if p.strip()]
    for index, paragraph in enumerate(paragraphs):
        first, *rest = paragraph.split("\n")
        # A title is followed by text and, unlike a hard-wrapped sentence, is much
        # shorter than the line after it.
        followed = (len(first) * 2 < len(rest[0])) if rest else index + 1 < len(paragraphs)
        if _looks_like_title(first) and followed:
            reader.heading(1 if first.isupper() else 2, first)
            reader.paragraph = rest
        else:
            reader.paragraph = [first, *rest]
        reader.flush()
    return reader


def _markdown_blocks(body: str) -> BlockBuilder:
    reader = _MarkdownReader()
    for line in body.split("\n"):
        reader.feed(line)
    reader.flush()
    return reader
