"""Seeing the fleet: structured logs with a trace context, Prometheus metrics, tracing.

- `context`: the trace_id, run_id, step and tenant of the work at hand (contextvars).
- `logs`: JSON (or text) log lines that carry that context.
- `celery_hooks`: the context travels in Celery message headers, from the API through
  the coordinator to the jobs; queue waits and job durations are measured there.
- `metrics` / `state_metrics`: counters the processes increment, and gauges read from
  the database (the truth) when Prometheus scrapes.
- `tracing`: optional OpenTelemetry (the standard instrumentations), a traceparent carried
  through the inbox, outbox and job messages.
"""
