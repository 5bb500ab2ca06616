"""ingest_documents and ingest_soa against a real SQLite database."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import select

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.ingestion_models import DocumentOutcome
from orchestrator.db.models import ChunkEmbedding, Document, DocumentChunk
from orchestrator.jobs.interface import JobFailure
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.knowledge.vectors import search
from tests.support.services import ACCESS_POLICY, INCIDENT_PLAN, Kit, open_kit
from workers.ingestion.service import ingest_documents, ingest_soa


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        yield kit


def test_uploaded_documents_are_chunked_with_heading_paths(kit: Kit) -> None:
    access = kit.add_document("access.md", ACCESS_POLICY)
    plan = kit.add_document("plan.md", INCIDENT_PLAN)
    result = kit.run_step(Step.INGEST_DOCUMENTS)
    assert result.summary == {
        "documents": 2,
        "ingested": 2,
        "failed": 0,
        "duplicates": 0,
        "chunks": 4,
        "duplicate_chunks": 0,
        "pages": 0,
        "errors": {},
        "warnings": [],
    }
    assert (access.status, access.chunk_count, access.error) == ("ingested", 2, None)
    outcome = kit.session.get(DocumentOutcome, access.id)
    assert outcome is not None
    assert (outcome.outcome, outcome.chunks, outcome.error_code) == ("ingested", 2, None)
    assert outcome.doc_metadata["owner"] == "Information Security"
    assert plan.status == "ingested"
    paths = {c.heading_path for c in kit.chunks()}
    assert paths == {
        "Access Control Policy > Authentication",
        "Access Control Policy > Access Reviews",
        "Incident Response Plan > Plan",
        "Incident Response Plan > Handling",
    }
    # Front matter is metadata, not searchable text.
    assert all("Information Security" not in c.text for c in kit.chunks())


def _code(kit: Kit, document: Document) -> str | None:
    outcome = kit.session.get(DocumentOutcome, document.id)
    assert outcome is not None, f"{document.filename} has no outcome"
    return outcome.error_code


def test_unusable_documents_fail_alone_with_a_typed_reason(kit: Kit) -> None:
    kit.add_document("policy.md", ACCESS_POLICY)
    pdf = kit.add_document("scan.pdf", b"%PDF-1.7 binary", media_type="application/pdf")
    binary = kit.add_document("blob.txt", b"\x00\x01\x02 not text", media_type="text/plain")
    empty = kit.add_document("empty.md", "   \n\n  ")
    headings = kit.add_document("title.md", "# Coming Soon\n\n## Later\n")
    image = kit.add_document("logo.md", b"\x89PNG\r\n\x1a\n" + bytes(64))
    legacy = kit.add_document("old.pdf", b"PK\x05\x06" + bytes(18), media_type="application/pdf")
    result = kit.run_step(Step.INGEST_DOCUMENTS)
    assert (result.summary["ingested"], result.summary["failed"]) == (1, 6)
    assert result.summary["errors"] == {
        "corrupt_file": 1,
        "no_extractable_text": 2,
        "wrong_type": 3,
    }
    assert pdf.status == "failed" and _code(kit, pdf) == "corrupt_file"
    assert "not a readable PDF" in (pdf.error or "")
    assert _code(kit, binary) == "wrong_type" and "binary" in (binary.error or "")
    assert _code(kit, empty) == "no_extractable_text"
    assert "no extractable text" in (empty.error or "")
    assert "headings but no body text" in (headings.error or "")
    assert _code(kit, image) == "wrong_type"
    assert _code(kit, legacy) == "wrong_type" and "zip" in (legacy.error or "")
    warned = {w["document"]: w["code"] for w in result.summary["warnings"]}
    assert warned["scan.pdf"] == "corrupt_file" and "policy.md" not in warned


def test_unknown_media_types_are_refused(kit: Kit) -> None:
    kit.add_document("policy.md", ACCESS_POLICY)
    odd = kit.add_document("model.step", "solid", media_type="application/step")
    kit.run_step(Step.INGEST_DOCUMENTS)
    assert _code(kit, odd) == "unsupported_type"
    assert "unsupported media type 'application/step'" in (odd.error or "")


def test_tampered_or_missing_files_fail_the_document(kit: Kit) -> None:
    kit.add_document("policy.md", ACCESS_POLICY)
    tampered = kit.add_document("tampered.md", INCIDENT_PLAN)
    Path(tampered.storage_path).write_text("something else")
    missing = kit.add_document("missing.md", "# Gone\ntext")
    Path(missing.storage_path).unlink()
    kit.run_step(Step.INGEST_DOCUMENTS)
    assert _code(kit, tampered) == "checksum_mismatch" and "SHA-256" in (tampered.error or "")
    assert _code(kit, missing) == "file_missing" and "missing" in (missing.error or "")


def test_no_text_anywhere_fails_the_job_without_retry(kit: Kit) -> None:
    kit.add_document("scan.pdf", b"%PDF-1.7", media_type="application/pdf")
    with pytest.raises(JobFailure) as failure:
        ingest_documents(kit.context(Step.INGEST_DOCUMENTS))
    assert failure.value.code == "no_extractable_text"
    assert failure.value.retryable is False
    assert "scan.pdf: [corrupt_file]" in failure.value.message


def test_no_documents_at_all_is_its_own_failure(kit: Kit) -> None:
    with pytest.raises(JobFailure) as failure:
        ingest_documents(kit.context(Step.INGEST_DOCUMENTS))
    assert (failure.value.code, failure.value.retryable) == ("no_documents", False)


def test_the_same_text_in_another_file_is_a_duplicate_document(kit: Kit) -> None:
    first = kit.add_document("policy.md", ACCESS_POLICY)
    # Other bytes (UTF-16 with a BOM, CRLF line ends), the same text once decoded.
    again = kit.add_document("policy-copy.md", ACCESS_POLICY.replace("\n", "\r\n").encode("utf-16"))
    result = kit.run_step(Step.INGEST_DOCUMENTS)
    assert (first.status, again.status) == ("ingested", "duplicate")
    assert again.chunk_count == 0 and again.error is None
    outcome = kit.session.get(DocumentOutcome, again.id)
    assert outcome is not None and outcome.duplicate_of == first.id
    assert result.summary["duplicates"] == 1
    assert result.summary["warnings"] == [
        {"document": "policy-copy.md", "code": "duplicate_document", "duplicate_of": str(first.id)}
    ]
    assert kit.count(DocumentChunk) == first.chunk_count == 2


def test_identical_chunks_are_stored_once_per_assessment(kit: Kit) -> None:
    shared = "## Authentication\nEvery login uses multi-factor authentication everywhere."
    one = kit.add_document("one.md", f"# Policy\n{shared}\n\n## Other\nOne only.")
    two = kit.add_document("two.md", f"# Policy\n{shared}\n\n## Else\nTwo only.")
    result = kit.run_step(Step.INGEST_DOCUMENTS)
    assert (one.chunk_count, two.chunk_count) == (2, 1)
    assert result.summary["duplicate_chunks"] == 1
    texts = [c.text for c in kit.chunks()]
    assert len(texts) == len(set(texts)) == 3


def test_redelivery_creates_no_duplicates(kit: Kit) -> None:
    kit.add_document("policy.md", ACCESS_POLICY)
    kit.add_document("broken.pdf", b"%PDF-1.4 truncated", media_type="application/pdf")
    kit.session.commit()
    context = kit.context(Step.INGEST_DOCUMENTS, job_id="job-ingest")
    # First delivery crashes before commit: nothing it wrote survives.
    ingest_documents(context)
    kit.session.rollback()
    assert kit.count(DocumentChunk) == 0
    first = ingest_documents(context)
    kit.session.commit()
    ids = [c.id for c in kit.chunks()]
    # A delivery after commit finds everything in place and reports the same.
    again = ingest_documents(context)
    kit.session.commit()
    assert again.summary == first.summary
    assert [c.id for c in kit.chunks()] == ids
    assert kit.count(DocumentOutcome) == 2
    # Even documents put back to 'uploaded' only get the chunks they lack.
    for document in kit.session.scalars(select(Document)):
        document.status = "uploaded"
    assert ingest_documents(context).summary == first.summary
    kit.session.commit()
    assert [c.id for c in kit.chunks()] == ids
    assert kit.count(DocumentOutcome) == 2


def _soa_content() -> dict[str, object]:
    return {
        "framework": "SCF",
        "controls": [
            {
                "control_id": "IAC-06",
                "domain": "IAC",
                "domain_name": "Identification & Authentication",
                "title": "Multi-Factor Authentication (MFA)",
                "applicable": True,
                "justification": "Remote access\n# must use MFA",
            },
            {
                "control_id": "PES-02",
                "domain": "PES",
                "domain_name": "Physical & Environmental Security",
                "title": "Physical Access Authorizations",
                "applicable": False,
                "justification": "Excluded: fully remote company",
            },
        ],
    }


def test_ingest_soa_needs_an_approved_soa(kit: Kit) -> None:
    kit.add_artifact(ArtifactKind.SOA, _soa_content(), status="draft")
    with pytest.raises(JobFailure) as failure:
        ingest_soa(kit.context(Step.INGEST_SOA))
    assert failure.value.code == "soa_not_approved"


def test_ingest_soa_adds_a_searchable_system_document_once(kit: Kit) -> None:
    kit.add_artifact(ArtifactKind.SOA, _soa_content(), status="draft")
    kit.add_artifact(ArtifactKind.SOA, _soa_content() | {"framework": "SOC 2"})
    result = kit.run_step(Step.INGEST_SOA)
    document = kit.session.scalars(select(Document)).one()
    assert document.filename == "soa-v2.md"
    assert (document.media_type, document.uploaded_by) == ("text/markdown", SYSTEM_UPLOADER)
    assert document.status == "ingested"
    assert Path(document.storage_path).read_text().startswith("---\ntitle: Statement")
    assert result.summary["soa_version"] == 2
    assert result.summary["chunks"] == document.chunk_count == kit.count(DocumentChunk)
    assert result.summary["embedded"] == kit.count(ChunkEmbedding) > 0
    # A newline in a justification never opens a heading of its own.
    # One heading per framework, one per row (an older SoA's control rows read as rows).
    assert {c.heading_path for c in kit.chunks()} == {
        "Statement of Applicability (SOC 2, version 2) > SOC 2 "
        "> IAC-06 Multi-Factor Authentication (MFA)",
        "Statement of Applicability (SOC 2, version 2) > SOC 2 "
        "> PES-02 Physical Access Authorizations",
    }
    hits = search(kit.session, kit.assessment.id, "fully remote company physical access")
    assert hits[0].filename == "soa-v2.md"
    assert "PES-02" in hits[0].heading_path

    again = kit.run_step(Step.INGEST_SOA)
    assert kit.count(Document) == 1
    assert kit.count(DocumentChunk) == result.summary["chunks"]
    assert (again.summary["new_chunks"], again.summary["embedded"]) == (0, 0)
