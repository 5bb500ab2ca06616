"""OpenTelemetry through the standard instrumentations; a W3C traceparent rides the data path.

Off unless LIFECYCLE_OTEL_ENABLED=true and the `otel` extra is installed: until
`configure()` turned it on, nothing of OpenTelemetry is imported and every helper here
returns at once. On, the SDK exports over OTLP/HTTP (configured the standard way:
OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, ...) and Celery, SQLAlchemy and httpx are
instrumented; `instrument_app` adds the FastAPI instrumentation to the API.

Work that waits in the database between two processes carries the traceparent of the span
that caused it, since no instrumentation sees through a table: a signal in the inbox
(`SignalEnvelope.traceparent`, stamped by `insert_signal`), a job's outbox row and message
(`JobRequest.traceparent`). The coordinator applies each signal in a span under the
signal's traceparent and publishes a job under its row's, so Celery's headers carry it to
the job, whose completion signal is stamped in turn: a request, the signals it caused, the
jobs they caused and their outcomes are one trace.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from orchestrator.config.settings import get_settings

log = logging.getLogger(__name__)

SERVICE_NAME = "lifecycle-fleet"
#: Probes and scrapes are not work: the FastAPI instrumentation leaves them out.
UNTRACED_URLS = "/healthz,/readyz,/metrics"

_provider: Any = None
"""The tracer provider spans go to; None: tracing is off (the only check on hot paths)."""


def enabled() -> bool:
    """Asked for by the settings and installed."""
    if not get_settings().observability.otel_enabled:
        return False
    try:
        import opentelemetry.instrumentation.celery  # noqa: F401
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError:
        log.warning("LIFECYCLE_OTEL_ENABLED is set but the `otel` extra is not installed")
        return False
    return True


def active() -> bool:
    return _provider is not None


def configure(provider: Any = None) -> None:
    """Turn tracing on for this process (once): the given provider (tests), or the SDK's
    with the OTLP exporter, made the global one."""
    global _provider
    if _provider is not None or not enabled():
        return
    if provider is None:
        provider = _exporting_provider()
        if provider is None:
            return
        from opentelemetry import trace

        trace.set_tracer_provider(provider)
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    CeleryInstrumentor().instrument(tracer_provider=provider)
    # Engines made from now on are traced (the fleet makes its engines lazily). Its
    # declared range stops below SQLAlchemy 2.1, whose engine events it uses are unchanged.
    SQLAlchemyInstrumentor().instrument(tracer_provider=provider, skip_dep_check=True)
    HTTPXClientInstrumentor().instrument(tracer_provider=provider)
    _provider = provider


def _exporting_provider() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    except ImportError:
        log.warning("the OTLP exporter is missing (install the `otel` extra): tracing stays off")
        return None
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    # OTEL_SERVICE_NAME, when set, names the process (API, workers) instead.
    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": SERVICE_NAME}
    provider = TracerProvider(resource=Resource.create(named))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    return provider


def instrument_app(app: Any) -> None:
    """Server spans for the API's requests (a caller's traceparent header is their parent)."""
    if _provider is None:
        return
    from opentelemetry.instrumentation.fastapi import FastAPIInstrumentor

    FastAPIInstrumentor.instrument_app(
        app, tracer_provider=_provider, excluded_urls=UNTRACED_URLS, exclude_spans=["send"]
    )


def reset() -> None:
    """Tracing off again, instrumentations removed (tests)."""
    global _provider
    if _provider is None:
        return
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
    from opentelemetry.instrumentation.sqlalchemy import SQLAlchemyInstrumentor

    for instrumentor in (CeleryInstrumentor(), SQLAlchemyInstrumentor(), HTTPXClientInstrumentor()):
        instrumentor.uninstrument()
    _provider = None


def current_traceparent() -> str | None:
    """The W3C traceparent of the span at hand, to store with work that waits."""
    if _provider is None:
        return None
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    carrier: dict[str, str] = {}
    TraceContextTextMapPropagator().inject(carrier)
    return carrier.get("traceparent")


def _context_of(traceparent: str | None) -> Any:
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

    if not traceparent:
        return None
    return TraceContextTextMapPropagator().extract({"traceparent": traceparent})


def same_trace(one: str, other: str) -> bool:
    """Whether two W3C traceparents ("00-<trace id>-<span id>-<flags>") share a trace."""
    return one.split("-")[1:2] == other.split("-")[1:2]


@contextmanager
def span_under(
    traceparent: str | None,
    name: str,
    attributes: Mapping[str, str] | None = None,
    linked: str | None = None,
) -> Iterator[None]:
    """A span whose parent is the stored traceparent (the current span without one),
    linked to the work at hand and to `linked` (another stored traceparent)."""
    if _provider is None:
        yield
        return
    from opentelemetry import trace

    # The work at hand (a coordinator task, a request) is a link, not the parent: the span
    # belongs to the trace that stored the traceparent.
    doing = trace.get_current_span().get_span_context()
    links = [trace.Link(doing)] if traceparent and doing.is_valid else []
    if linked and linked != traceparent:
        other = trace.get_current_span(_context_of(linked)).get_span_context()
        if other.is_valid:
            links.append(trace.Link(other))
    tracer = _provider.get_tracer("orchestrator")
    with tracer.start_as_current_span(
        name,
        context=_context_of(traceparent),
        attributes=dict(attributes or {}),
        links=links or None,
    ):
        yield


def resumed(traceparent: str | None) -> AbstractContextManager[None]:
    """Make the stored traceparent the current context: what is sent here (a Celery
    message: the instrumentation's publish span and headers) continues that trace."""
    if _provider is None or not traceparent:
        return nullcontext()
    return _attached(traceparent)


@contextmanager
def _attached(traceparent: str) -> Iterator[None]:
    from opentelemetry import context

    token = context.attach(_context_of(traceparent))
    try:
        yield
    finally:
        context.detach(token)
