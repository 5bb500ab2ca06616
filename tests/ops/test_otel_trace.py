"""One trace from an HTTP request to the jobs it caused and their outcomes back.

The standard instrumentations (FastAPI, Celery, SQLAlchemy) export to the SDK's in-memory
exporter while a real in-process Celery worker runs a lifecycle on the embedded default:
the start request's signals wait in the inbox, the coordinator's wake-up applies them,
the ingestion job's outbox row becomes a Celery message, and the job posts its outcome
signal. Every hop that waits in the database carries the traceparent, so the job's span
is a descendant of the request's, and so is the span applying the job's outcome.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest
from fastapi.testclient import TestClient

pytest.importorskip("opentelemetry.sdk.trace")
pytest.importorskip("opentelemetry.instrumentation.celery")

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import (  # noqa: E402
    InMemorySpanExporter,
)
from opentelemetry.trace import SpanKind  # noqa: E402

from orchestrator.api.app import create_app  # noqa: E402
from orchestrator.config.settings import reset_settings  # noqa: E402
from orchestrator.db.migrate import upgrade  # noqa: E402
from orchestrator.engine.messages import get_app  # noqa: E402
from orchestrator.observability import tracing  # noqa: E402
from orchestrator.runtime.embedded import embedded_worker  # noqa: E402
from orchestrator.testing.reset import reset_process_state  # noqa: E402
from tests.api.conftest import Api, waiting_at  # noqa: E402
from tests.support.embedded import LIFECYCLE_VARS  # noqa: E402
from tests.support.polling import poll  # noqa: E402

INGEST_TASK = "ingestion.ingest_documents"
#: The jobs a start runs before it waits for a person (the framework selection).
JOB_TASKS = (INGEST_TASK, "kb_index.index_kb", "analysis.run_step")
#: The ingestion job's outcome signal, as the coordinator's span names it.
OUTCOME_APPLIED = "apply documents_ingested"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Api, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with pytest.MonkeyPatch.context() as patch:
        for name in LIFECYCLE_VARS:
            patch.delenv(name, raising=False)
        patch.setenv("LIFECYCLE_HOME", str(tmp_path_factory.mktemp("traced")))
        patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
        patch.setenv("LIFECYCLE_OTEL_ENABLED", "true")
        patch.setenv("LIFECYCLE_EMBEDDER", "hashing")  # the drafts after the selection: quick
        reset_process_state()
        tracing.configure(provider)  # before the engine is made: its queries are traced
        try:
            upgrade()
            with embedded_worker(get_app(), concurrency=3):
                # A fresh app: the FastAPI instrumentation wraps it as it is made.
                yield Api(TestClient(create_app())), exporter
        finally:
            tracing.reset()
            reset_process_state()
            reset_settings()


def _ancestry(span: ReadableSpan, by_id: dict[int, ReadableSpan]) -> list[ReadableSpan]:
    """The span and its recorded parents, nearest first."""
    chain = [span]
    while chain[-1].parent is not None and chain[-1].parent.span_id in by_id:
        chain.append(by_id[chain[-1].parent.span_id])
    return chain


def _named(spans: Sequence[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def _attribute(span: ReadableSpan, name: str) -> object:
    return (span.attributes or {}).get(name)


def test_a_request_and_the_job_it_caused_are_one_trace(
    traced: tuple[Api, InMemorySpanExporter],
) -> None:
    api, exporter = traced
    owner = api.key("signal", "read", tenant="tenant-otel")
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    started = api.start(owner, assessment["id"], "otel-1")
    assert started.status_code in (200, 201, 202), started.text
    run_id = started.json()["id"]
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))

    def all_exported(spans: Sequence[ReadableSpan]) -> bool:
        # A job's span ends after its outcome is committed: wait until every one is exported.
        return all(_named(spans, f"run/{task}") for task in JOB_TASKS) and any(
            s.name == OUTCOME_APPLIED and _attribute(s, "lifecycle.run_id") == run_id for s in spans
        )

    spans = poll(exporter.get_finished_spans, all_exported, what="the jobs' spans")
    by_id = {s.context.span_id: s for s in spans}

    [request] = [
        s
        for s in spans
        if s.kind is SpanKind.SERVER
        and str(_attribute(s, "http.route")).endswith("/workflows/lifecycle/start")
    ]
    [job] = _named(spans, f"run/{INGEST_TASK}")
    assert job.kind is SpanKind.CONSUMER
    assert job.context.trace_id == request.context.trace_id

    # job <- its Celery message, published under its outbox row's traceparent
    #     <- the coordinator applying a signal the request stored (the inbox's traceparent)
    #     <- the start request
    chain = _ancestry(job, by_id)
    assert request in chain, [s.name for s in chain]
    names = [s.name for s in chain[: chain.index(request) + 1]]
    # Directly: not through the coordinator's task span, which the wake-up message alone
    # would also have made a child of the request.
    assert names == [
        f"run/{INGEST_TASK}",
        f"apply_async/{INGEST_TASK}",
        "apply documents_uploaded",
        request.name,
    ], names
    assert _attribute(chain[2], "lifecycle.run_id") == run_id

    # The job's outcome signal is applied under the job's span, and the jobs it causes in
    # turn (the index, the pre-analysis) stay in the request's trace: one lifecycle, one
    # trace, up to the person it waits for.
    [outcome] = [
        s for s in _named(spans, OUTCOME_APPLIED) if _attribute(s, "lifecycle.run_id") == run_id
    ]
    assert job in _ancestry(outcome, by_id)
    for task in JOB_TASKS:
        [later] = _named(spans, f"run/{task}")
        assert request in _ancestry(later, by_id), task
    # The instrumented engine's statements are spans of the same trace.
    assert any(
        s.context.trace_id == request.context.trace_id and _attribute(s, "db.system") is not None
        for s in spans
    )


def test_a_persons_signal_joins_the_lifecycles_trace_linked_to_their_request(
    traced: tuple[Api, InMemorySpanExporter],
) -> None:
    api, exporter = traced
    owner = api.key("signal", "read", tenant="tenant-otel-2")
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    run_id = api.start(owner, assessment["id"], "otel-2").json()["id"]
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))
    selected = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        headers={**owner, "Idempotency-Key": f"{run_id}:framework"},
        json={"type": "framework_selected", "payload": {"framework": "SOC 2"}},
    )
    assert selected.status_code in (200, 201, 202), selected.text

    def applied(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
        return [
            s
            for s in _named(spans, "apply framework_selected")
            if _attribute(s, "lifecycle.run_id") == run_id
        ]

    spans = poll(exporter.get_finished_spans, lambda found: bool(applied(found)), what="the span")
    by_id = {s.context.span_id: s for s in spans}
    servers = [s for s in spans if s.kind is SpanKind.SERVER]
    [start] = [
        s
        for s in servers
        if str(_attribute(s, "http.route")).endswith("/workflows/lifecycle/start")
        and s.context.trace_id in {a.context.trace_id for a in applied(spans)}
    ]
    # The only signal sent over HTTP in this module: the person's selection.
    [request] = [s for s in servers if str(_attribute(s, "http.route")).endswith("/signals")]
    [span] = applied(spans)
    # In the lifecycle's trace, under its start request; the person's request is a link.
    assert span.context.trace_id == start.context.trace_id != request.context.trace_id
    assert start in _ancestry(span, by_id)
    assert request.context.span_id in {link.context.span_id for link in span.links}
