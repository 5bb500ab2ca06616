"""Log lines, trace context, Flower credentials and spans, without services."""

from __future__ import annotations

import contextvars
import io
import json
import logging
from collections.abc import Iterator

import pytest

from orchestrator.config.settings import reset_settings
from orchestrator.observability import tracing
from orchestrator.observability.celery_hooks import CONTEXT_HEADER, job_fields, on_publish
from orchestrator.observability.context import bound, close_context, current, enrich, open_context
from orchestrator.observability.logs import configure_logging
from orchestrator.runtime.flower_auth import FlowerAuthError, basic_auth_from_env

JOB_BODY = {
    "job_id": "r1:ingest_documents:1",
    "trace_id": "t-job",
    "run_id": "r1",
    "step": "ingest_documents",
    "tenant_id": "acme",
    "kind": "ingest_documents",
}


@pytest.fixture
def log_stream() -> Iterator[io.StringIO]:
    stream = io.StringIO()
    configure_logging(level="INFO", fmt="json", stream=stream)
    yield stream
    close_context()
    configure_logging()  # the services' default again


def test_a_json_line_carries_the_context_and_the_extras(log_stream: io.StringIO) -> None:
    open_context(trace_id="t-1", run_id="run-1", tenant="acme")
    with bound(step="index_kb"):
        logging.getLogger("orchestrator.test").info("did %s", "it", extra={"attempt": 2})
    logging.getLogger("orchestrator.test").warning("after")

    first, second = [json.loads(line) for line in log_stream.getvalue().splitlines()]
    assert first["message"] == "did it" and first["level"] == "info"
    assert (first["trace_id"], first["run_id"], first["tenant"], first["step"]) == (
        "t-1",
        "run-1",
        "acme",
        "index_kb",
    )
    assert first["attempt"] == 2
    assert "step" not in second, "a bound field ends with its block"


def test_enrich_sets_the_open_context_in_place_and_none_removes() -> None:
    open_context(trace_id="request-trace", step="old")
    # A sync endpoint runs in a worker thread on a copy of the request's context.
    contextvars.copy_context().run(enrich, trace_id="signal-trace", step=None, run_id="run-9")
    assert current() == {"trace_id": "signal-trace", "run_id": "run-9"}
    close_context()
    assert current() == {}


def test_a_job_message_carries_its_own_request_context_in_its_headers() -> None:
    open_context(trace_id="the-coordinators-wake-up", tenant="acme")
    headers: dict[str, object] = {}
    on_publish(sender="ingestion.ingest_documents", body=([JOB_BODY], {}, {}), headers=headers)
    close_context()
    assert headers[CONTEXT_HEADER] == {
        "trace_id": "t-job",
        "tenant": "acme",
        "run_id": "r1",
        "step": "ingest_documents",
        "job_id": "r1:ingest_documents:1",
    }
    assert job_fields([{"no": "job"}]) == {}


def test_flower_credentials_are_required_and_checked() -> None:
    good = "ops:Kq8-vD2m-Xr5-pL9"
    assert basic_auth_from_env({"FLOWER_BASIC_AUTH": f"{good}, ana:Zt4-wQ7-nB1-cE6"}) == [
        good,
        "ana:Zt4-wQ7-nB1-cE6",
    ]
    for wrong, why in [
        ("", "not set"),
        ("operator", "user:password"),
        ("operator:short", "shorter than 12"),
        ("operator:change-me-to-a-long-random-secret", "placeholder"),
        (":Kq8-vD2m-Xr5-pL9", "user:password"),
    ]:
        with pytest.raises(FlowerAuthError, match=why):
            basic_auth_from_env({"FLOWER_BASIC_AUTH": wrong})


def test_tracing_off_stamps_nothing_and_opens_no_span() -> None:
    """Off (the default), nothing is configured: the data path stores no traceparent and
    the coordinator's spans are plain blocks."""
    tracing.configure()
    assert not tracing.active()
    assert tracing.current_traceparent() is None
    with tracing.span_under("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "x"):
        assert tracing.current_traceparent() is None
    with tracing.resumed("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"):
        assert tracing.current_traceparent() is None


def test_a_stored_traceparent_is_the_parent_of_what_follows() -> None:
    """On, a span under a stored traceparent joins its trace, and sending under it
    (`resumed`) hands that trace on."""
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    pytest.importorskip("opentelemetry.instrumentation.celery")
    stored = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("LIFECYCLE_OTEL_ENABLED", "true")
        reset_settings()
        tracing.configure(sdk.TracerProvider())
        try:
            with tracing.span_under(stored, "apply documents_uploaded"):
                inside = tracing.current_traceparent()
            with tracing.resumed(stored):
                resumed = tracing.current_traceparent()
        finally:
            tracing.reset()
            reset_settings()
    assert inside is not None and inside.split("-")[1] == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert inside.split("-")[2] != "00f067aa0ba902b7"  # a child span, not the stored one
    assert resumed == stored
    assert tracing.current_traceparent() is None
