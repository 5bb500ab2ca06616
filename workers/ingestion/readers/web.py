"""HTML: visible text in document order; h1-h6 are headings, block elements paragraphs,
table rows one line each. Scripts, styles, forms and navigation are left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.formats.document_errors import DocumentError, DocumentErrorCode
from workers.ingestion.normalise import normalise_inline
from workers.ingestion.parse import BlockBuilder, Metadata, ParsedDocument

_SKIPPED = frozenset(
    {
        "script",
        "style",
        "noscript",
        "template",
        "svg",
        "math",
        "iframe",
        "object",
        "embed",
        "nav",
        "button",
        "select",
        "option",
        "input",
        "textarea",
        "head",
        "canvas",
        "audio",
        "video",
    }
)
_BLOCKS = frozenset(
    {
        "p",
        "div",
        "section",
        "article",
        "main",
        "aside",
        "header",
        "footer",
        "li",
        "ul",
        "ol",
        "dl",
        "dt",
        "dd",
        "blockquote",
        "pre",
        "table",
        "tr",
        "hr",
        "figure",
        "figcaption",
        "address",
        "details",
        "summary",
        "form",
        "fieldset",
        "legend",
        "caption",
        "body",
        "thead",
        "tbody",
        "tfoot",
    }
)
_HEADINGS = {f"h{level}": level for level in range(1, 7)}
_CELLS = frozenset({"td", "th"})


class _Walker:
    def __init__(self, limits: IngestionLimits) -> None:
        self.builder = BlockBuilder()
        self.heading_parts: list[str] | None = None
        self.budget = limits.max_text_chars
        self.limits = limits

    def text(self, value: str | None) -> None:
        if not value:
            return
        self.budget -= len(value)
        if self.budget < 0:
            raise DocumentError(
                DocumentErrorCode.TOO_LARGE,
                f"more than {self.limits.max_text_chars} characters of text",
            )
        target = self.heading_parts if self.heading_parts is not None else self.builder.paragraph
        target.append(value)

    def flush(self) -> None:
        text = normalise_inline(" ".join(self.builder.paragraph))
        self.builder.paragraph = [text] if text else []
        self.builder.flush()

    def start(self, tag: str) -> None:
        if tag in _HEADINGS:
            self.flush()
            self.heading_parts = []
        elif tag in _BLOCKS:
            self.flush()
        elif tag in _CELLS and self.builder.paragraph:
            self.text(" | ")
        elif tag == "br":
            self.text(" ")

    def end(self, tag: str) -> None:
        if tag in _HEADINGS and self.heading_parts is not None:
            self.builder.heading(_HEADINGS[tag], normalise_inline(" ".join(self.heading_parts)))
            self.heading_parts = None
        elif tag in _BLOCKS:
            self.flush()

    def walk(self, root: Any) -> None:
        """Iterative, so deeply nested markup cannot exhaust the stack."""
        stack: list[tuple[Any, bool]] = [(root, False)]
        while stack:
            element, closing = stack.pop()
            tag = element.tag.lower() if isinstance(element.tag, str) else None
            if closing:
                self.end(tag or "")
                self.text(element.tail)
                continue
            if tag is None or tag in _SKIPPED:
                self.text(element.tail)  # comments and skipped elements keep their tail
                continue
            self.start(tag)
            self.text(element.text)
            stack.append((element, True))
            stack.extend((child, False) for child in reversed(element))


def read_html(path: Path, limits: IngestionLimits) -> ParsedDocument:
    import lxml.html  # imported in the parser process only
    from lxml import etree

    data = path.read_bytes()
    # huge_tree: nesting up to libxml2's hard limit (2048) rather than 256.
    parser = lxml.html.HTMLParser(
        remove_comments=True, remove_pis=True, no_network=True, huge_tree=True
    )
    try:
        root = lxml.html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as error:
        raise DocumentError(DocumentErrorCode.CORRUPT_FILE, f"unreadable HTML ({error})") from error
    if any(entry.type_name == "ERR_RESOURCE_LIMIT" for entry in parser.error_log):
        # libxml2 stopped part-way: refuse rather than index a silently truncated page.
        raise DocumentError(
            DocumentErrorCode.CORRUPT_FILE, "the HTML nests too deeply to read in full"
        )
    walker = _Walker(limits)
    walker.walk(root)
    return walker.builder.result(_metadata(root))


def _metadata(root: Any) -> Metadata:
    metadata: Metadata = {}
    title = root.findtext(".//title")
    if title and title.strip():
        metadata["title"] = normalise_inline(title)
    for meta in root.iterfind(".//meta[@name]"):
        name = str(meta.get("name", "")).lower()
        if name in ("description", "author", "keywords") and meta.get("content"):
            metadata[name] = normalise_inline(str(meta.get("content")))
    return metadata
