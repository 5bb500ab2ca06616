"""Parsing and normalisation: front matter, heading paths, canonical text."""

from __future__ import annotations

import unicodedata

from workers.ingestion.normalise import decode_text, normalise_text
from workers.ingestion.parse import Block, parse, split_front_matter


def test_normalise_composes_unicode_drops_controls_and_collapses_whitespace() -> None:
    decomposed = "Cafe\u0301 \u00a0 policy\t\tv2\u200b\x07\r\n\r\n\r\n\r\nnext  line  "
    text = normalise_text(decomposed)
    assert text == "Café policy v2\n\nnext line"
    assert unicodedata.is_normalized("NFC", text)


def test_decode_text_handles_bom_legacy_encodings_and_refuses_binary() -> None:
    assert decode_text("\ufeffhello".encode()) == "hello"
    assert decode_text("naïve".encode("cp1252")) == "naïve"
    assert decode_text("wide".encode("utf-16")) == "wide"
    assert decode_text(b"\x89PNG\r\n\x00\x00\x00") is None


def test_front_matter_becomes_metadata_and_leaves_the_body() -> None:
    metadata, body = split_front_matter(
        '---\ntitle: "Access Policy"\nversion: 2.1\ntags: [access, mfa]\nowners:\n'
        "- security\n- it\n---\n# Access Policy\nBody text."
    )
    assert metadata == {
        "title": "Access Policy",
        "version": "2.1",
        "tags": ["access", "mfa"],
        "owners": ["security", "it"],
    }
    assert body == "# Access Policy\nBody text."


def test_unclosed_front_matter_is_kept_as_text() -> None:
    metadata, body = split_front_matter("---\ntitle: x\nno closing line")
    assert metadata == {}
    assert body.startswith("---")


def test_markdown_front_matter_is_not_indexed_as_text() -> None:
    parsed = parse("---\nsecret: do-not-index\n---\n# Title\nVisible.", "text/markdown")
    assert parsed.metadata == {"secret": "do-not-index"}
    assert all("do-not-index" not in block.text for block in parsed.blocks)


def test_markdown_blocks_carry_their_heading_path() -> None:
    text = (
        "Preamble.\n\n# Policy\nIntro.\n\n## Scope\nScope text.\n\n### Detail\nDeep.\n\n"
        "## Roles\nRoles text.\n\n# Annex ##\nAnnex text."
    )
    blocks = parse(text, "text/markdown; charset=utf-8").blocks
    assert blocks == (
        Block((), "Preamble."),
        Block(("Policy",), "Intro."),
        Block(("Policy", "Scope"), "Scope text."),
        Block(("Policy", "Scope", "Detail"), "Deep."),
        Block(("Policy", "Roles"), "Roles text."),  # a level-2 heading closes level 3
        Block(("Annex",), "Annex text."),  # closing hashes are not part of the title
    )


def test_setext_headings_rules_and_code_fences() -> None:
    text = (
        "Title\n=====\nUnder title.\n\nSection\n-------\nUnder section.\n\n* * *\n\n"
        "```\n# not a heading\n```"
    )
    blocks = parse(text, "text/markdown").blocks
    assert blocks[0] == Block(("Title",), "Under title.")
    assert blocks[1] == Block(("Title", "Section"), "Under section.")
    assert blocks[2].heading_path == ("Title", "Section")
    assert "# not a heading" in blocks[2].text


def test_plain_text_titles_become_headings_but_wrapped_sentences_do_not() -> None:
    text = (
        "BACKUP STANDARD\n\nBackups\nProduction databases are backed up nightly and "
        "restored every quarter.\n\nAll staff must complete\ntraining yearly.\n\nThanks"
    )
    blocks = parse(text, "text/plain").blocks
    assert blocks[0] == Block(
        ("BACKUP STANDARD", "Backups"),
        "Production databases are backed up nightly and restored every quarter.",
    )
    assert blocks[1] == Block(
        ("BACKUP STANDARD", "Backups"), "All staff must complete\ntraining yearly."
    )
    assert blocks[2].text == "Thanks"  # a last short line is text, not a lost heading


def test_plain_text_front_matter_like_lines_stay_text() -> None:
    parsed = parse("---\ntitle: x\n---\nBody", "text/plain")
    assert parsed.metadata == {}
    assert parsed.has_text


def test_whitespace_only_document_has_no_text() -> None:
    assert not parse(" \n\t\n\u200b", "text/markdown").has_text
