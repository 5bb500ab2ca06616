"""Approvals are sealed to what they approved: `verify` recomputes the digest of the
approved content and of every document version it cites, and names what changed since.
End to end on the embedded fleet, through the service, the CLI and the HTTP API."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from sqlalchemy import update

from orchestrator.api import app
from orchestrator.cli.group import lifecycle
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.canonical import canonical_sha256
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import ApprovalEvent, Artifact, Document
from orchestrator.db.session import transaction
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.engine.messages import get_app
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.apikeys import create_key
from orchestrator.service.approval_events import record_approval
from orchestrator.service.approval_seals import cited_document_ids
from orchestrator.service.document_versions import upload_document_version
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.seal_verification import verify_run
from tests.console.kit import Browser, text
from tests.support.polling import poll
from tests.support.roles import grant
from workers.reporting.signoff import sign_off

TENANT = "tenant-seals"
OWNER = Actor(TENANT, "user:owner")
REVIEWER = Actor(TENANT, "user:reviewer")
ACCESS = b"# Access\n\nAccess reviews happen every quarter. MFA is required for admins.\n"
BACKUP = b"# Backup\n\nBackups are encrypted and restored in a test every month.\n"


@pytest.fixture
def approved_soa(embedded: Path) -> Iterator[uuid.UUID]:
    """A run whose SoA v1 is approved (the event recorded, the run left waiting)."""
    grant(OWNER)
    grant(REVIEWER)
    with embedded_worker(get_app(), concurrency=2):
        assessment = create_assessment(OWNER, "org", "Seals")
        upload_document(OWNER, assessment.id, "access.md", ACCESS)
        upload_document(OWNER, assessment.id, "backup.md", BACKUP)
        run = start_lifecycle(
            OWNER, assessment.id, f"s-{assessment.id}", policies={"soa": {"require_decided": False}}
        )
        reviewer = ScriptedReviewer(REVIEWER)

        def at_soa() -> bool:
            view = get_run(OWNER, run.id)
            if view.current_step == "wait_for_soa_approval" and view.status.startswith("waiting"):
                return True
            assert view.status not in ("completed", "cancelled", "failed"), view
            reviewer.answer(view)
            return False

        poll(at_soa, bool, timeout_s=120, what="the SoA's approval wait", interval_s=0.01)
        record_approval(REVIEWER, run.id, "soa", 1)
        yield run.id


def _soa(run_id: uuid.UUID) -> Artifact:
    with transaction() as session:
        found = session.query(Artifact).filter_by(run_id=run_id, kind="soa", version=1).one()
        session.expunge(found)
        return found


def _cited(run_id: uuid.UUID) -> Document:
    content = _soa(run_id).content
    with transaction() as session:
        cited = sorted(cited_document_ids(session, content))
        assert cited, "the SoA cites no document"
        found = session.get(Document, cited[0])
        assert found is not None
        session.expunge(found)
        return found


def test_an_untouched_run_verifies_clean(approved_soa: uuid.UUID) -> None:
    result = verify_run(OWNER, approved_soa)
    assert result.verified and result.changes() == []
    [check] = result.approvals
    assert check.content_sha256 == canonical_sha256(_soa(approved_soa).content)
    # Every document the SoA cites is sealed with its version's digest.
    content = _soa(approved_soa).content
    with transaction() as session:
        event = session.query(ApprovalEvent).filter_by(run_id=approved_soa).one()
        documents = {str(d.id): d.sha256 for d in session.query(Document)}
        cited = cited_document_ids(session, content)
    assert event.cited_documents
    assert event.cited_documents == {i: documents[i] for i in map(str, cited)}
    outcome = CliRunner().invoke(lifecycle, ["verify", str(approved_soa)])
    assert outcome.exit_code == 0, outcome.output
    assert "holds" in outcome.output and "changed:" not in outcome.output
    assert "Every approval still holds what it approved" in _console_run_page(approved_soa)


def test_the_report_sign_off_carries_the_seal(approved_soa: uuid.UUID) -> None:
    soa = _soa(approved_soa)
    with transaction() as session:
        [entry] = sign_off(session, {ArtifactKind.SOA: soa})
        event = session.query(ApprovalEvent).filter_by(run_id=approved_soa).one()
        [approval] = entry["approvals"]
        assert approval["sealed"] == {
            "content_sha256": canonical_sha256(soa.content),
            "cited_documents": event.cited_documents,
        }


def test_edited_artifact_content_is_named(approved_soa: uuid.UUID) -> None:
    edited = _soa(approved_soa).content | {"note": "edited in the database"}
    with transaction() as session:
        session.execute(
            update(Artifact)
            .where(Artifact.run_id == approved_soa, Artifact.kind == "soa")
            .values(content=edited)
        )
    result = verify_run(OWNER, approved_soa)
    assert not result.verified
    assert any(c.startswith("soa v1: content changed since approval") for c in result.changes())
    outcome = CliRunner().invoke(lifecycle, ["verify", str(approved_soa), "--json"])
    assert outcome.exit_code == 1
    assert json.loads(outcome.output)["verified"] is False
    page = _console_run_page(approved_soa)
    assert "soa v1, approved by user:reviewer: its evidence or content changed since" in page
    assert "content changed since approval" in page


def _console_run_page(run_id: uuid.UUID) -> str:
    reset_settings()
    browser = Browser(TestClient(app))
    _, key = create_key(TENANT, "user:auditor", ("read",))
    browser.sign_in(key)
    page = browser.get(f"/console/runs/{run_id}")
    assert page.status_code == 200, page.text
    return text(page)


def test_a_replaced_evidence_file_fails_and_is_named(approved_soa: uuid.UUID) -> None:
    cited = _cited(approved_soa)
    # Someone overwrites the stored evidence file in place.
    Path(cited.storage_path).write_bytes(b"# Access\n\nNo reviews.\n")
    outcome = CliRunner().invoke(lifecycle, ["verify", str(approved_soa)])
    assert outcome.exit_code == 1
    assert f"{cited.filename!r} version 1 ({cited.id}): its stored file was replaced" in (
        outcome.output
    )


def test_a_superseded_cited_document_is_named(approved_soa: uuid.UUID, tmp_path: Path) -> None:
    cited = _cited(approved_soa)
    newer = tmp_path / "newer.md"
    newer.write_bytes(b"# Access\n\nAccess reviews happen every month now.\n")
    replacement = upload_document_version(
        OWNER, cited.assessment_id, cited.id, cited.filename, newer
    )
    changes = verify_run(OWNER, approved_soa).changes()
    assert (
        f"soa v1: cited document {cited.filename!r} version 1 ({cited.id}) was replaced by "
        f"document {replacement.id}" in changes
    )


def test_the_api_reads_the_verification(
    approved_soa: uuid.UUID, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    _, key = create_key(TENANT, "user:auditor", ("read",))
    path = f"/api/v1/workflows/{approved_soa}/verification"
    client = TestClient(app)
    answer = client.get(path, headers={"Authorization": f"Bearer {key}"})
    assert answer.status_code == 200, answer.text
    assert answer.json()["verified"] is True
    assert answer.json()["approvals"][0]["artifact_kind"] == "soa"
    _, other = create_key("tenant-other", "user:auditor", ("read",))
    assert client.get(path, headers={"Authorization": f"Bearer {other}"}).status_code == 404
    reset_settings()
