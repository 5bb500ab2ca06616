"""The embedded default (SQLite, in-process worker) while jobs run: a person reading or
deciding never waits for a job, and no job computes inside its write transaction.

Jobs are held at realistic points (inside their Prepare, or inside their transaction)
until the test lets them go; nothing here is timed.
"""

from __future__ import annotations

import re
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.compute_guard import ComputeUnderWriteLock, observing, write_transaction_open
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.demo.run import SAMPLES, run_demo
from orchestrator.engine.messages import get_app
from orchestrator.knowledge.embedder import HashingEmbedder
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.queries import list_jobs
from orchestrator.service.read_models import RunView
from tests.console.kit import Browser, key, text
from tests.support.polling import poll, scaled
from tests.support.roles import grant
from workers.ingestion import tasks as ingestion_tasks

TENANT = "contention"
OWNER = Actor(tenant_id=TENANT, actor_id="user:owner@contention")
REVIEWER = Actor(tenant_id=TENANT, actor_id="user:ana@contention")


class Hold:
    """Parks the first call of a function until the test releases it."""

    def __init__(self, function: Callable[..., Any]) -> None:
        self.function = function
        self.entered = threading.Event()
        self.release = threading.Event()

    def __call__(self, *args: Any) -> Any:
        if not self.entered.is_set():
            self.entered.set()
            if not self.release.wait(scaled(120)):
                raise TimeoutError("the test never released the held job")
        return self.function(*args)


@contextmanager
def worker() -> Iterator[None]:
    with embedded_worker(get_app(), concurrency=3):
        yield


def _start(name: str) -> uuid.UUID:
    assessment = create_assessment(OWNER, "org", name)
    for path in sorted(SAMPLES.iterdir()):
        upload_document(OWNER, assessment.id, path.name, path.read_bytes())
    # The console approves the SoA as drafted here: its gate asks for no rows decided first.
    return start_lifecycle(
        OWNER,
        assessment.id,
        idempotency_key=f"start-{assessment.id}",
        policies={"soa": {"require_decided": False}},
    ).id


def _until(run_id: uuid.UUID, done: Callable[[RunView], bool], what: str) -> RunView:
    def observe() -> RunView:
        run = get_run(OWNER, run_id)
        if run.status in ("failed", "blocked", "cancelled"):
            raise AssertionError(f"run {run_id} ended {run.status}: {run}")
        return run

    return poll(observe, done, timeout_s=120, what=what)


def test_no_job_kind_computes_inside_its_write_transaction(embedded: Path) -> None:
    seen: list[tuple[str, str | None, str | None]] = []
    with observing(lambda what, job, holder: seen.append((what, job, holder))), worker():
        result = run_demo(say=lambda _: None, stall_s=scaled(120))
    assert result.run.status == "completed"
    inside = [entry for entry in seen if entry[2] is not None]
    assert inside == [], "heavy work ran inside a job's write transaction"
    by_kind: dict[str, set[str]] = {}
    for what, job, _ in seen:
        if job is not None:
            by_kind.setdefault(job.split(":", 1)[0], set()).add(what.split(" ", 1)[0])
    # Every kind of job did its heavy work, and did it in its Prepare.
    assert by_kind[JobKind.INGEST_DOCUMENTS.value] >= {"parsing"}
    assert by_kind[JobKind.INDEX_KB.value] >= {"embedding"}
    assert by_kind[JobKind.ANALYSIS.value] >= {"drafting", "embedding"}
    assert by_kind[JobKind.INGEST_SOA.value] >= {"parsing", "embedding"}
    assert by_kind[JobKind.RENDER_REPORT.value] >= {"rendering"}
    drafted = {what for what, job, _ in seen if what.startswith("drafting ")}
    assert len(drafted) == 7, drafted  # every analysis step drafted ahead


def test_heavy_work_inside_a_job_transaction_is_refused() -> None:
    with write_transaction_open("job analysis:test"), pytest.raises(ComputeUnderWriteLock):
        HashingEmbedder().embed(["access control policy"])
    assert HashingEmbedder().embed(["access control policy"]).shape[0] == 1


def test_a_read_returns_while_a_job_holds_its_write_transaction(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    person = Browser(TestClient(app))
    assert person.sign_in(key("admin", tenant=TENANT, principal=REVIEWER.actor_id)).is_redirect
    # Held inside the job's transaction, as a slow job body would be: it holds the lock.
    hold = Hold(ingestion_tasks.ingest_documents_service)
    monkeypatch.setattr(ingestion_tasks, "ingest_documents_service", hold)
    with worker():
        run_id = _start("held in its transaction")
        try:
            assert hold.entered.wait(scaled(60)), "the job never started"
            # The Python API and the console read while the write lock is held.
            run = get_run(OWNER, run_id)
            jobs = list_jobs(OWNER, run_id)
            page = person.get(f"/console/runs/{run_id}")
            assert not hold.release.is_set()
        finally:
            hold.release.set()
        assert run.status == "running" and run.current_step == Step.INGEST_DOCUMENTS.value
        assert [job.status for job in jobs] == ["started"]
        assert page.status_code == 200 and "ingest_documents" in text(page)
        _until(run_id, lambda r: r.current_step != Step.INGEST_DOCUMENTS.value, "ingestion")


def test_a_console_approval_succeeds_while_a_job_is_being_prepared(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    grant(REVIEWER)
    ana = Browser(TestClient(app))
    assert ana.sign_in(key("admin", tenant=TENANT, principal=REVIEWER.actor_id)).is_redirect
    reviewer = ScriptedReviewer(REVIEWER, framework="SOC 2")
    with worker():
        first = _start("approved meanwhile")

        def answered() -> RunView:
            run = get_run(OWNER, first)
            reviewer.answer(run) if run.status == "waiting_for_input" else None
            return run

        waiting = poll(
            answered,
            lambda r: (
                r.status == "waiting_for_approval"
                and r.current_step == Step.WAIT_FOR_SOA_APPROVAL.value
            ),
            timeout_s=120,
            what="the SoA approval wait",
        )
        # Another run's ingestion is held inside its Prepare (parsing), as a large upload is.
        hold = Hold(ingestion_tasks.prepare_documents)
        monkeypatch.setattr(ingestion_tasks, "prepare_documents", hold)
        second = _start("being prepared")
        try:
            assert hold.entered.wait(scaled(60)), "the second run's job never started"
            version = waiting.context["artifacts"]["soa"]
            run_url = f"/console/runs/{first}"
            review_url = f"{run_url}/artifacts/soa?version={version}"
            review = ana.get(review_url)
            form = review.text[review.text.index(f'action="{run_url}/artifacts/soa/decision"') :]
            found = re.search(r'name="key" value="([^"]+)"', form)
            assert found
            sent = ana.post(
                f"{run_url}/artifacts/soa/decision",
                {
                    "key": found.group(1),
                    "version": version,
                    "decision": "approved",
                    "role": "assessor",
                    "comment": "fine",
                },
                from_page=review_url,
            )
            still_held = not hold.release.is_set()
            held_jobs = list_jobs(OWNER, second)
        finally:
            hold.release.set()
        assert sent.status_code == 303, sent.text
        assert sent.headers["location"].startswith(run_url)
        assert "soa v" in text(ana.get(sent.headers["location"]))
        assert still_held and [job.status for job in held_jobs] == ["started"]
        _until(first, lambda r: r.current_step != Step.WAIT_FOR_SOA_APPROVAL.value, "approval")
        _until(second, lambda r: r.current_step != Step.INGEST_DOCUMENTS.value, "ingestion")
