"""Documents judged whole from their text, on real documents: a blank SSP form is wholly
`template_not_adopted`, comply's policies and JupiterOne's 141 procedures are adopted, a
policy uploaded as `log.md` is a policy and maturity stays at 2 on it; a reviewer's
amendment is what the next draft reads, and is audited; bad amendments change nothing."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.judgement_models import DocumentJudgementAmendment
from orchestrator.db.models import AuditEvent
from orchestrator.knowledge.provenance import SYSTEM_UPLOADER
from orchestrator.service.document_judgements import amend_document_judgement
from orchestrator.testing.reset import reset_process_state
from tests.support.services import FIXED_NOW, ORG, TENANT, Kit, open_kit
from tests.support.shared_data import SHARED_DATA
from workers.analysis.document_judgement import (
    DocumentJudgement,
    judge_documents,
    judge_text,
)
from workers.analysis.templates import placeholders

DATA = SHARED_DATA
COMPLY = DATA / "policies" / "markdown" / "comply"
PDFS = DATA / "policies" / "pdf"
SSP_FORM = DATA / "policies" / "docx" / "FedRAMP_ac-2_v2.1.docx"
PROCEDURES = DATA / "evidence" / "procedures"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

pytestmark = pytest.mark.skipif(
    not (COMPLY.is_dir() and PROCEDURES.is_dir() and SSP_FORM.is_file() and PDFS.is_dir()),
    reason=f"the real document sets are absent ({DATA})",
)

# A log export, as a SIEM writes one: the operating record beside the policy.
ACCESS_LOG = "\n".join(
    f"2025-02-{day:02d}T09:{minute:02d}:00Z okta user.session.start user=ana@acme.example "
    f"result=SUCCESS mfa=push"
    for day in range(1, 8)
    for minute in (5, 35)
)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kit]:
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path_factory.mktemp("judged")) as kit:
            for path in sorted(PROCEDURES.glob("*.md")) + sorted(COMPLY.glob("*.md")):
                kit.add_document(path.name, path.read_bytes())
            for path in sorted(PDFS.glob("*.pdf")):
                kit.add_document(path.name, path.read_bytes(), media_type="application/pdf")
            kit.add_document(SSP_FORM.name, SSP_FORM.read_bytes(), media_type=DOCX)
            kit.add_document("soa.md", "# SoA\nSystem text.\n", uploaded_by=SYSTEM_UPLOADER)
            kit.session.commit()
            kit.run_step(Step.INGEST_DOCUMENTS)
            yield kit
    finally:
        set_clock(None)


def _by_name(kit: Kit) -> dict[str, DocumentJudgement]:
    return {j.filename: j for j in judge_documents(kit.session, kit.assessment.id).values()}


def test_the_blank_ssp_form_is_wholly_template_not_adopted(corpus: Kit) -> None:
    judged = _by_name(corpus)[SSP_FORM.name]
    assert not judged.adopted and judged.as_row()["adoption"] == "template_not_adopted"
    assert "every passage set aside" in judged.adoption_basis
    passages = [c for c in corpus.chunks() if str(c.document_id) == judged.document_id]
    # From the text alone, without the title that calls it a template, the same verdict.
    alone = judge_text("d", "x.docx", [(c.heading_path, c.text) for c in passages])
    assert not alone.adopted


def test_a_template_whose_one_passage_has_no_placeholder_is_wholly_not_adopted(
    corpus: Kit,
) -> None:
    form = [c for c in corpus.chunks() if c.text.count("Responsible Role:")]
    filled = ("Purpose", "Backups of production databases are encrypted and kept offsite.")
    passages = [(c.heading_path, c.text) for c in form] + [filled]
    judged = judge_text("t", "template.md", passages)
    assert not judged.adopted and not placeholders(filled[1])


def test_comply_policies_and_the_141_procedures_are_adopted(corpus: Kit) -> None:
    judged = _by_name(corpus)
    procedures = {n: j for n, j in judged.items() if (PROCEDURES / n).is_file()}
    assert len(procedures) == len(list(PROCEDURES.glob("*.md"))) == 141
    refused = {n: j.adoption_basis for n, j in procedures.items() if not j.adopted}
    assert refused == {}
    policies = {n: j for n, j in judged.items() if (COMPLY / n).is_file() or (PDFS / n).is_file()}
    assert len(policies) >= 9
    assert all(j.adopted and j.kind == "policy" for j in policies.values()), {
        n: (j.kind, j.adoption_basis) for n, j in policies.items()
    }
    kinds = Counter(j.kind for j in procedures.values())
    # The procedures prescribe a practice: none of them is taken for an operating record.
    assert kinds["record"] == 0 and kinds["procedure"] > kinds["plan"]
    assert "soa.md" not in judged  # the orchestrator's own documents are never evidence


def _single(kit: Kit, filename: str, content: str) -> str:
    document = kit.add_document(filename, content)
    kit.session.commit()
    kit.run_step(Step.INGEST_DOCUMENTS)
    return str(document.id)


def test_a_policy_named_like_a_log_is_a_policy_and_maturity_stays_at_two(tmp_path: Path) -> None:
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path) as kit:
            policy = _single(kit, "log.md", (COMPLY / "access.md").read_text())
            judged = judge_documents(kit.session, kit.assessment.id)[policy]
            assert judged.kind == "policy" and judged.adopted, judged
            assert "log" not in judged.kind_basis.lower().split('"')[0]

            def control(control_id: str, document_ids: list[str]) -> dict[str, object]:
                return {
                    "control_id": control_id,
                    "domain": "IAC",
                    "domain_name": "Identification & Authentication",
                    "title": control_id,
                    "proposal": "evidence_found",
                    "evidence": [{"document": "?", "document_id": d} for d in document_ids],
                }

            # An evidence analysis drafted before it listed documents: kinds judged now.
            kit.add_artifact(K.EVIDENCE_ANALYSIS, {"controls": [control("IAC-01", [policy])]})
            kit.run_step(Step.CREATE_MATURITY_ASSESSMENT)
            (row,) = kit.content(K.MATURITY_ASSESSMENT)["controls"]
            assert row["level"] == 2 and row["evidence_kinds"] == ["policy"]
            assert not row["criteria"][0]["met"]  # level 0 is never met beside level 2

            record = _single(kit, "access-review.md", ACCESS_LOG)
            assert judge_documents(kit.session, kit.assessment.id)[record].kind == "record"
            kit.add_artifact(
                K.EVIDENCE_ANALYSIS, {"controls": [control("IAC-01", [policy, record])]}
            )
            kit.run_step(Step.CREATE_MATURITY_ASSESSMENT)
            (row,) = kit.content(K.MATURITY_ASSESSMENT)["controls"]
            assert row["level"] == 3 and row["evidence_kinds"] == ["policy", "record"]
    finally:
        set_clock(None)


@pytest.fixture
def reviewed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Kit, str]]:
    """A kit whose database the service layer also uses, with the SSP form ingested."""
    set_clock(lambda: FIXED_NOW)
    try:
        with open_kit(tmp_path) as kit:
            monkeypatch.setenv("LIFECYCLE_DATABASE_URL", f"sqlite:///{tmp_path / 't.db'}")
            reset_process_state()
            form = kit.add_document(SSP_FORM.name, SSP_FORM.read_bytes(), media_type=DOCX)
            kit.session.commit()
            kit.run_step(Step.INGEST_DOCUMENTS)
            yield kit, str(form.id)
    finally:
        reset_process_state()
        set_clock(None)


REVIEWER = Actor(tenant_id=TENANT, actor_id="user:reviewer@acme", organizations=frozenset({ORG}))


def test_a_reviewers_amendment_is_what_the_next_draft_reads_and_is_audited(
    reviewed: tuple[Kit, str],
) -> None:
    kit, form = reviewed
    assert not judge_documents(kit.session, kit.assessment.id)[form].adopted
    kit.session.commit()  # the kit's read ends before the service writes (one SQLite writer)
    view = amend_document_judgement(
        REVIEWER,
        kit.assessment.id,
        uuid.UUID(form),
        adoption="adopted",
        kind="plan",
        reason="our SSP section, filled in the system inventory",
        idempotency_key="judge-1",
    )
    assert (view.adoption, view.kind, view.overridden_by) == ("adopted", "plan", REVIEWER.actor_id)
    kit.session.expire_all()
    judged = judge_documents(kit.session, kit.assessment.id)[form]
    assert judged.adopted and judged.kind == "plan"
    assert judged.overridden_by == REVIEWER.actor_id
    assert judged.override_reason == "our SSP section, filled in the system inventory"
    assert judged.as_row()["adoption"] == "adopted"
    kit.session.commit()
    # A replay with the same key is the same amendment, not a second one.
    again = amend_document_judgement(
        REVIEWER,
        kit.assessment.id,
        uuid.UUID(form),
        adoption="adopted",
        kind="plan",
        reason="our SSP section, filled in the system inventory",
        idempotency_key="judge-1",
    )
    assert again.duplicate and len(again.amendments) == 1
    (event,) = kit.session.scalars(
        select(AuditEvent).where(
            AuditEvent.event_type == "lifecycle_workflow_document_judgement_amended"
        )
    )
    assert event.actor_id == REVIEWER.actor_id and event.run_id == kit.run.id
    assert event.event_metadata["document_id"] == form
    assert event.event_metadata["adoption"]["after"] == "adopted"
    assert event.event_metadata["reason"] == "our SSP section, filled in the system inventory"


@pytest.mark.parametrize(
    ("changes", "error", "words"),
    [
        ({"kind": "memo", "reason": "x"}, InvalidInput, "kind must be one of"),
        ({"adoption": "maybe", "reason": "x"}, InvalidInput, "adoption must be one of"),
        ({"kind": "policy", "reason": "  "}, InvalidInput, "needs a reason"),
        ({"reason": "nothing set"}, InvalidInput, "sets the kind, the adoption or both"),
        ({"kind": "policy", "reason": "x", "document": "unknown"}, NotFound, "has no document"),
    ],
)
def test_a_bad_amendment_is_refused_and_changes_nothing(
    reviewed: tuple[Kit, str], changes: dict[str, str], error: type[Exception], words: str
) -> None:
    kit, form = reviewed
    document = uuid.uuid4() if changes.pop("document", None) else uuid.UUID(form)
    with pytest.raises(error, match=words):
        amend_document_judgement(REVIEWER, kit.assessment.id, document, **changes)  # type: ignore[arg-type]
    count = select(func.count()).select_from(DocumentJudgementAmendment)
    assert kit.session.scalar(count) == 0
    assert not judge_documents(kit.session, kit.assessment.id)[form].adopted
