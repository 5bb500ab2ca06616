"""Optional OpenTelemetry spans, sharing the fleet's trace ids.

Off unless LIFECYCLE_OTEL_ENABLED=true and the `otel` extra is installed. A trace id of
the fleet is 32 hex digits, like OpenTelemetry's, so spans of one signal join one trace:
each task's span is a child of a remote parent carrying that trace id. Exporting is
configured the standard way (OTEL_EXPORTER_OTLP_ENDPOINT, ...) when the OTLP exporter is
installed; otherwise spans go nowhere unless a provider was set by the host program.
"""

from __future__ import annotations

import logging
import secrets
import threading
from typing import Any

from orchestrator.config.settings import get_settings

log = logging.getLogger(__name__)

_spans: dict[str, Any] = {}
_lock = threading.Lock()


def enabled() -> bool:
    if not get_settings().observability.otel_enabled:
        return False
    try:
        import opentelemetry.trace  # noqa: F401
    except ImportError:
        return False
    return True


def configure() -> None:
    """Install an SDK provider with the OTLP exporter, when both are installed."""
    if not enabled():
        return
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError:
        log.warning("OpenTelemetry SDK or OTLP exporter missing: spans are not exported")
        return
    provider = TracerProvider(resource=Resource.create({"service.name": "lifecycle-fleet"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)


def parent_context(trace_id: str | None) -> Any:
    """A remote parent with the fleet's trace id, or None when it is not 32 hex digits."""
    from opentelemetry import trace

    try:
        value = int(trace_id or "", 16)
    except ValueError:
        return None
    if not value or len(trace_id or "") != 32:
        return None
    parent = trace.SpanContext(
        trace_id=value,
        span_id=int(secrets.token_hex(8), 16),
        is_remote=True,
        trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
    )
    return trace.set_span_in_context(trace.NonRecordingSpan(parent))


def start_task_span(task_id: str, name: str, fields: dict[str, str]) -> None:
    if not enabled():
        return
    from opentelemetry import trace

    span = trace.get_tracer("orchestrator").start_span(
        name,
        context=parent_context(fields.get("trace_id")),
        attributes={f"lifecycle.{key}": value for key, value in fields.items()}
        | {"celery.task_id": task_id},
    )
    with _lock:
        _spans[task_id] = span


def end_task_span(task_id: str, outcome: str) -> None:
    with _lock:
        span = _spans.pop(task_id, None)
    if span is not None:
        span.set_attribute("lifecycle.outcome", outcome)
        span.end()
