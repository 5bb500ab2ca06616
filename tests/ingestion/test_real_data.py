"""Every file of the real-document corpus (shared/data, written by others): it is
ingested, or refused with the right typed reason, at upload or by the worker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.ingestion_models import ChunkProvenance, DocumentOutcome
from orchestrator.db.models import Document, DocumentChunk
from orchestrator.formats.document_errors import DocumentError
from orchestrator.formats.sniff import HEAD_BYTES, sniff_media_type
from orchestrator.knowledge.vectors import search
from tests.support.services import Kit, open_kit
from workers.ingestion.sandbox import ParserSandbox
from workers.ingestion.service import ingest_documents

#: Files that must not ingest, and why. Every other file must yield text.
REFUSED = {
    "policies/awkward/encrypted-openpassword.pdf": "encrypted",
    "policies/awkward/image-only-ccittfax.pdf": "no_extractable_text",
    "policies/awkward/scanned-skewed.pdf": "no_extractable_text",
    "policies/awkward/invalid-header-only.pdf": "corrupt_file",
    "policies/docx/test_corrupted.docx": "empty_file",  # 0 bytes
    "policies/docx/AwesomeCloud-IRP.docx": "no_extractable_text",  # a title, no body
    "policies/markdown/comply/privacy.md": "no_extractable_text",  # "Coming Soon" only
}
#: Structured data, not documents: refused at upload. FedRAMP's validation rules and
#: allowed values (`fedramp/`) are XML: rules for machines, not evidence.
DATA_SUFFIXES = {
    ".json": "unsupported_type",
    ".xml": "unsupported_type",
    ".sch": "unsupported_type",
}


@dataclass
class Corpus:
    kit: Kit
    refused_at_upload: dict[str, str]
    documents: dict[str, Document]

    def outcome(self, name: str) -> DocumentOutcome:
        row = self.kit.session.get(DocumentOutcome, self.documents[name].id)
        assert row is not None
        return row

    def chunks(self, name: str) -> list[DocumentChunk]:
        return list(
            self.kit.session.scalars(
                select(DocumentChunk)
                .where(DocumentChunk.document_id == self.documents[name].id)
                .order_by(DocumentChunk.ordinal)
            )
        )


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def corpus(
    shared_data: Path, tmp_path_factory: pytest.TempPathFactory, sandbox: ParserSandbox
) -> Iterator[Corpus]:
    """Every file uploaded (checked as the upload checks it) into one assessment, then
    one ingestion job, then the KB index."""
    with open_kit(tmp_path_factory.mktemp("corpus")) as kit:
        refused: dict[str, str] = {}
        documents: dict[str, Document] = {}
        for path in _files(shared_data):
            name = str(path.relative_to(shared_data))
            data = path.read_bytes()
            try:
                with path.open("rb") as handle:
                    media_type = sniff_media_type(
                        path.name,
                        data[:HEAD_BYTES],
                        handle,
                        complete=len(data) <= HEAD_BYTES,
                        limits=get_settings().ingestion,
                    )
            except DocumentError as error:
                refused[name] = error.code.value
                continue
            documents[name] = kit.add_document(path.name, data, media_type=media_type)
        ingest_documents(kit.context(Step.INGEST_DOCUMENTS), sandbox=sandbox)
        kit.session.commit()
        kit.run_step(Step.INDEX_KB)
        yield Corpus(kit, refused, documents)


def test_every_file_is_ingested_or_refused_with_its_typed_reason(
    corpus: Corpus, shared_data: Path
) -> None:
    names = [str(p.relative_to(shared_data)) for p in _files(shared_data)]
    assert len(names) >= 20
    for name in names:
        expected = REFUSED.get(name) or DATA_SUFFIXES.get(Path(name).suffix)
        if name in corpus.refused_at_upload:
            assert corpus.refused_at_upload[name] == expected, name
            continue
        outcome = corpus.outcome(name)
        if expected is None:
            assert (outcome.outcome, outcome.error_code) == ("ingested", None), (
                name,
                outcome.error_message,
            )
            assert outcome.chunks > 0 and outcome.characters > 0, name
        else:
            assert (outcome.outcome, outcome.error_code) == ("failed", expected), (
                name,
                outcome.error_message,
            )
            assert outcome.error_message


def test_the_typed_messages_say_what_is_wrong(corpus: Corpus) -> None:
    assert "password" in (
        corpus.outcome("policies/awkward/encrypted-openpassword.pdf").error_message or ""
    )
    scanned = corpus.outcome("policies/awkward/scanned-skewed.pdf").error_message or ""
    assert "no extractable text" in scanned and "scanned" in scanned
    title_only = corpus.outcome("policies/docx/AwesomeCloud-IRP.docx").error_message or ""
    assert "headings but no body text" in title_only


def test_pdf_policies_keep_pages_headings_and_metadata(corpus: Corpus) -> None:
    name = "policies/pdf/ACME-AP.pdf"
    outcome = corpus.outcome(name)
    assert outcome.pages == 4
    assert outcome.doc_metadata["title"] == "Availability Policy"
    chunks = corpus.chunks(name)
    paths = {c.heading_path for c in chunks}
    assert {"Availability Policy > 1 Purpose and Scope", "Availability Policy > 4 Policy"} <= paths
    backups = [c for c in chunks if "Full backups of critical resources" in c.text]
    assert backups and backups[0].heading_path == "Availability Policy > 4 Policy"
    provenance = corpus.kit.session.get(ChunkProvenance, backups[0].id)
    assert provenance is not None and provenance.page_start in (2, 3)
    text = "\n".join(c.text for c in chunks)
    # The running header and footer of every page are gone; hyphenated words rejoined.
    assert "confidential 2020" not in text
    assert "organization’s" in text and "orga-" not in text and "\ufffe" not in text


def test_a_multi_column_pdf_reads_in_column_order(corpus: Corpus) -> None:
    text = " ".join(c.text for c in corpus.chunks("policies/awkward/multicolumn.pdf"))
    assert "Lorem ipsum dolor sit amet, consectetuer adipiscing elit. Ut purus elit" in text


def test_docx_tables_and_styled_headings_are_kept(corpus: Corpus) -> None:
    chunks = corpus.chunks("policies/docx/FedRAMP_ac-2_v2.1.docx")
    paths = {c.heading_path for c in chunks}
    assert "Control Enhancement AC-2 (1)" in paths
    text = "\n".join(c.text for c in chunks)
    assert "Responsible Role:" in text or "Control Summary Information" in text
    assert "Assigns account managers for information system accounts;" in text


def test_html_keeps_visible_text_and_drops_scripts(corpus: Corpus) -> None:
    name = "policies/html/ACME-compliance-dashboard.html"
    text = "\n".join(c.text for c in corpus.chunks(name))
    assert "ACME Evil Anvil Corporation Compliance Program" in text or corpus.outcome(
        name
    ).doc_metadata["title"].startswith("ACME Evil Anvil")
    assert "addEventListener" not in text and "history.replaceState" not in text


def test_markdown_front_matter_becomes_metadata(corpus: Corpus) -> None:
    name = "policies/markdown/comply/access.md"
    metadata = corpus.outcome(name).doc_metadata
    assert metadata["name"] == "Access Onboarding and Termination Policy"
    assert "CC6.1" in metadata["TSC"]
    assert all("majorRevisions" not in c.text for c in corpus.chunks(name))


def test_search_finds_real_passages_with_their_provenance(corpus: Corpus) -> None:
    hits = search(
        corpus.kit.session,
        corpus.kit.assessment.id,
        "full backups of critical resources weekly",
        k=3,
    )
    assert hits, "no hit for a passage that is in the corpus"
    pdf_hits = [h for h in hits if h.filename == "ACME-AP.pdf"]
    assert pdf_hits and pdf_hits[0].page_start is not None
    assert pdf_hits[0].heading_path.startswith("Availability Policy")
