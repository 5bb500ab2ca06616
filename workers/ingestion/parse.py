"""Plain text and Markdown to paragraphs, each under the path of headings above it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from workers.ingestion.normalise import normalise_text

MARKDOWN = "text/markdown"
PLAIN_TEXT = "text/plain"
SUPPORTED_MEDIA_TYPES = frozenset({MARKDOWN, PLAIN_TEXT})

_ATX = re.compile(r"^(#{1,6})\s+(.+?)(?:\s+#+)?\s*$")
_SETEXT = re.compile(r"^(=+|-+)$")
_RULE = re.compile(r"^([-*_])(\s*\1){2,}$")
_FENCE = re.compile(r"^(```|~~~)")
_META_ITEM = re.compile(r"^([A-Za-z0-9_.-]+)\s*:\s*(.*)$")

Metadata = dict[str, str | list[str]]


@dataclass(frozen=True)
class Block:
    """One paragraph (or code block, list) and the headings it sits under."""

    heading_path: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class ParsedDocument:
    metadata: Metadata = field(default_factory=dict)
    blocks: tuple[Block, ...] = ()

    @property
    def has_text(self) -> bool:
        return any(block.text for block in self.blocks)


def base_media_type(media_type: str) -> str:
    """'text/markdown; charset=utf-8' -> 'text/markdown'."""
    return media_type.split(";", 1)[0].strip().lower()


def parse(text: str, media_type: str) -> ParsedDocument:
    """Parse decoded text; the caller checks the media type is supported."""
    text = normalise_text(text)
    if base_media_type(media_type) != MARKDOWN:
        return ParsedDocument(blocks=tuple(_plain_blocks(text)))
    metadata, body = split_front_matter(text)
    return ParsedDocument(metadata=metadata, blocks=tuple(_markdown_blocks(body)))


def split_front_matter(text: str) -> tuple[Metadata, str]:
    """Strip a leading YAML front matter block ('---' ... '---') into flat metadata.

    Only the flat subset documents use in practice is read: `key: value`, inline
    `[a, b]` lists and `- item` lists. An unclosed block is left in the text.
    """
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end] in ("---", "..."):
            return _parse_metadata(lines[1:end]), "\n".join(lines[end + 1:]).strip()
    return {}, text


def _parse_metadata(lines: list[str]) -> Metadata:
    metadata: Metadata = {}
    key: str | None = None
    for line in lines:
        item = _META_ITEM.match(line)
        if item:
            key, value = item.group(1), item.group(2).strip()
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


class _MarkdownReader:
    """Walks lines once, tracking the heading stack and the open paragraph."""

    def __init__(self) -> None:
        self.headings: list[tuple[int, str]] = []
        self.paragraph: list[str] = []
        self.blocks: list[Block] = []
        self.in_fence = False

    def flush(self) -> None:
        if self.paragraph:
            path = tuple(title for _, title in self.headings)
            self.blocks.append(Block(path, "\n".join(self.paragraph)))
            self.paragraph = []

    def heading(self, level: int, title: str) -> None:
        self.flush()
        # A heading closes every open heading at its level or deeper.
        self.headings = [(lvl, t) for lvl, t in self.headings if lvl < level]
        self.headings.append((level, title))

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
    return (len(line) <= 60 and len(line.split()) <= 8 and line[:1].isupper()
            and line[-1:] not in ".,;:!?")


def _plain_blocks(text: str) -> list[Block]:
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
    return reader.blocks


def _markdown_blocks(body: str) -> list[Block]:
    reader = _MarkdownReader()
    for line in body.split("\n"):
        reader.feed(line)
    reader.flush()
    return reader.blocks
