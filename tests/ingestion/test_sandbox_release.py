"""A job that fails part-way through its documents leaves the parser sandbox usable.

Celery keeps a retried job's exception (and so its frames) alive; whatever those frames
hold must not keep the sandbox from the next job in the same process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.exc import OperationalError

from orchestrator.config.ingestion import IngestionLimits
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.formats import media
from tests.support.polling import scaled
from tests.support.services import ACCESS_POLICY, INCIDENT_PLAN, Kit, open_kit
from workers.ingestion import service as ingestion_service
from workers.ingestion.sandbox import ParserSandbox


@pytest.fixture
def sandbox() -> Iterator[ParserSandbox]:
    sandbox = ParserSandbox(IngestionLimits())
    yield sandbox
    sandbox._stop()  # not close(): that would wait for a lock a failed test left held


@pytest.fixture
def kit(tmp_path: Path) -> Iterator[Kit]:
    with open_kit(tmp_path) as kit:
        yield kit


def _free_within_time(sandbox: ParserSandbox) -> bool:
    """Whether the next job could take the sandbox (a held one would block it for good)."""
    if not sandbox._lock.acquire(timeout=scaled(30)):
        return False
    sandbox._lock.release()
    return True


def test_a_database_error_while_storing_frees_the_sandbox_for_the_next_job(
    kit: Kit, sandbox: ParserSandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit.add_document("access.md", ACCESS_POLICY)
    kit.add_document("incident.md", INCIDENT_PLAN)  # queued in the parser when it fails

    def connection_lost(*_: object) -> None:
        raise OperationalError(
            "INSERT INTO document_chunks",
            {},
            Exception("terminating connection due to administrator command"),
        )

    monkeypatch.setattr(ingestion_service, "store_parsed", connection_lost)
    with pytest.raises(OperationalError) as kept:  # kept alive, as a retry keeps it
        ingestion_service.ingest_documents(kit.context(Step.INGEST_DOCUMENTS), sandbox=sandbox)
    monkeypatch.undo()

    assert _free_within_time(sandbox), "the failed job still holds the sandbox"
    assert kept.value is not None
    # And the whole next job runs in the same sandbox.
    result = ingestion_service.ingest_documents(kit.context(Step.INGEST_DOCUMENTS), sandbox=sandbox)
    assert result.summary["ingested"] == 2, result.summary["warnings"]


def test_a_batch_left_part_way_stops_the_reply_in_flight(
    sandbox: ParserSandbox, tmp_path: Path
) -> None:
    paths = []
    for name in ("a.md", "b.md", "c.md"):
        path = tmp_path / name
        path.write_text(ACCESS_POLICY.replace("quarter", name))
        paths.append((path, media.MARKDOWN))
    with pytest.raises(RuntimeError), sandbox.parsing(paths) as outcomes:
        next(outcomes)
        raise RuntimeError("the caller failed on the first document")
    assert sandbox.pid is None  # the next file's reply was still in the pipe
    assert _free_within_time(sandbox)
    assert sandbox.parse(*paths[2]).has_text
