"""Chunking: boundaries follow headings and paragraphs, sizes hold, ids are stable."""

from __future__ import annotations

import pytest

from workers.ingestion.chunking import (
    OVERLAP_CHARS,
    TARGET_CHARS,
    chunk_blocks,
    chunk_id,
)
from workers.ingestion.parse import Block, parse


def _paragraph(label: str, words: int) -> str:
    return " ".join(f"{label}{i}" for i in range(words)) + "."


def test_chunks_never_cross_a_heading() -> None:
    text = "# A\nalpha one.\n\nalpha two.\n\n## B\nbeta.\n\n# C\ngamma."
    chunks = chunk_blocks(parse(text, "text/markdown").blocks)
    assert [(c.heading_path, c.text) for c in chunks] == [
        ("A", "alpha one.\n\nalpha two."),
        ("A > B", "beta."),
        ("C", "gamma."),
    ]
    assert [c.ordinal for c in chunks] == [0, 1, 2]


def test_long_sections_split_at_paragraphs_within_the_target_with_overlap() -> None:
    paragraphs = [_paragraph(f"p{n}w", 80) for n in range(6)]  # ~500 chars each
    blocks = [Block(("Policy", "Scope"), p) for p in paragraphs]
    chunks = chunk_blocks(blocks)
    assert len(chunks) > 1
    assert all(len(c.text) <= TARGET_CHARS for c in chunks)
    assert all(c.heading_path == "Policy > Scope" for c in chunks)
    for previous, current in zip(chunks, chunks[1:], strict=False):
        overlap = current.text.split("\n\n", 1)[0]
        # Each later chunk opens with the tail of the one before: a small overlap.
        assert previous.text.endswith(overlap)
        assert 0 < len(overlap) <= OVERLAP_CHARS
    # No paragraph is lost: each one is whole in some chunk.
    assert all(any(p in c.text for c in chunks) for p in paragraphs)


def test_a_paragraph_longer_than_the_target_splits_at_sentences() -> None:
    sentences = [f"Sentence {n} " + "word " * 30 + "end." for n in range(20)]
    chunks = chunk_blocks([Block((), " ".join(sentences))])
    assert len(chunks) >= 3
    assert all(len(c.text) <= TARGET_CHARS for c in chunks)
    # Splits happen at sentence ends, never inside a word.
    assert all(c.text.rstrip().endswith("end.") for c in chunks)


def test_an_unbroken_token_is_cut_hard() -> None:
    chunks = chunk_blocks([Block((), "x" * 5000)])
    assert all(len(c.text) <= TARGET_CHARS for c in chunks)
    assert "".join(c.text for c in chunks).count("x") >= 5000


def test_chunking_is_deterministic() -> None:
    text = "# A\n" + "\n\n".join(_paragraph("w", 120) for _ in range(5))
    first = chunk_blocks(parse(text, "text/markdown").blocks)
    second = chunk_blocks(parse(text, "text/markdown").blocks)
    assert first == second
    assert [c.sha256 for c in first] == [c.sha256 for c in second]


def test_chunk_ids_are_stable_and_distinct() -> None:
    doc = "ab" * 32
    assert chunk_id("assessment-1", doc, 0) == chunk_id("assessment-1", doc, 0)
    assert len(chunk_id("assessment-1", doc, 0)) == 64
    assert chunk_id("assessment-1", doc, 0) != chunk_id("assessment-1", doc, 1)
    # The same file in two assessments must not collide on the chunk primary key.
    assert chunk_id("assessment-1", doc, 0) != chunk_id("assessment-2", doc, 0)


def test_overlap_must_be_small() -> None:
    with pytest.raises(ValueError):
        chunk_blocks([Block((), "text")], target=100, overlap=60)
