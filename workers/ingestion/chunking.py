"""Chunking along headings and paragraphs, with a target size and a small overlap."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import groupby

from workers.ingestion.parse import Block

TARGET_CHARS = 1200
OVERLAP_CHARS = 150
HEADING_SEPARATOR = " > "

_SENTENCE_END = re.compile(r"(?<=[.!?;:])\s+")


@dataclass(frozen=True)
class Chunk:
    ordinal: int
    heading_path: str
    text: str
    page_start: int | None = None
    page_end: int | None = None

    @cached_property
    def sha256(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


def chunk_id(namespace: str, document_sha256: str, ordinal: int) -> str:
    """Stable id: a re-delivered job computes the same ids and finds its rows.

    `namespace` is the assessment: the same file uploaded to two assessments
    has the same sha256 and would otherwise collide on the chunk primary key.
    """
    material = f"{namespace}:{document_sha256}:{ordinal}".encode()
    return hashlib.sha256(material).hexdigest()[:64]


def chunk_blocks(
    blocks: Iterable[Block], target: int = TARGET_CHARS, overlap: int = OVERLAP_CHARS
) -> list[Chunk]:
    """Chunks never cross a heading; within a section, paragraphs are packed up to
    `target` characters and each chunk after the first repeats the previous one's tail."""
    if not 0 <= overlap < target // 2:
        raise ValueError("overlap must be non-negative and under half the target")
    chunks: list[Chunk] = []
    for path, section in groupby(blocks, key=lambda block: block.heading_path):
        heading = HEADING_SEPARATOR.join(path)
        paragraphs = [(block.text, block.page) for block in section if block.text]
        for text, first, last in _pack(paragraphs, target, overlap):
            chunks.append(Chunk(len(chunks), heading, text, first, last))
    return chunks


_Packed = tuple[str, int | None, int | None]


def _pack(paragraphs: list[tuple[str, int | None]], target: int, overlap: int) -> Iterator[_Packed]:
    """Chunks of whole paragraphs (or pieces of long ones), with the pages they span."""
    pieces = [
        (piece, page)
        for text, page in paragraphs
        for piece in _split_long(text, target - overlap - 2)
    ]
    current: list[str] = []
    pages: list[int] = []
    size = 0
    for piece, page in pieces:
        if current and size + 2 + len(piece) > target:
            done = "\n\n".join(current)
            yield done, _first(pages), _last(pages)
            tail = _tail(done, overlap)
            # The overlap is the previous page's text: the new chunk starts there.
            pages = pages[-1:] if tail else []
            current, size = ([tail] if tail else []), len(tail)
        current.append(piece)
        if page is not None:
            pages.append(page)
        size += len(piece) + (2 if size else 0)
    if current:
        yield "\n\n".join(current), _first(pages), _last(pages)


def _first(pages: list[int]) -> int | None:
    return min(pages) if pages else None


def _last(pages: list[int]) -> int | None:
    return max(pages) if pages else None


def _split_long(text: str, limit: int) -> list[str]:
    """A paragraph longer than `limit` splits at sentence ends, then at spaces."""
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    for sentence in _SENTENCE_END.split(text):
        for piece in _split_words(sentence, limit):
            if parts and len(parts[-1]) + 1 + len(piece) <= limit:
                parts[-1] = f"{parts[-1]} {piece}"
            else:
                parts.append(piece)
    return parts


def _split_words(text: str, limit: int) -> list[str]:
    if len(text) <= limit:
        return [text]
    parts: list[str] = []
    for word in text.split():
        # A "word" longer than the limit (a key, a URL) is cut hard.
        while len(word) > limit:
            parts.append(word[:limit])
            word = word[limit:]
        if parts and len(parts[-1]) + 1 + len(word) <= limit:
            parts[-1] = f"{parts[-1]} {word}"
        else:
            parts.append(word)
    return parts


def _tail(text: str, size: int) -> str:
    """The last `size` characters, starting at a word boundary."""
    if size == 0:
        return ""
    if len(text) <= size:
        return text
    tail = text[-size:]
    space = tail.find(" ")
    return tail[space + 1 :].strip() if space >= 0 else tail.strip()
