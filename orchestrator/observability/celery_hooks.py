"""Celery signal handlers: the trace context rides in message headers; tasks are timed.

Publishing (any process): the `lifecycle_context` header takes the current context (a
job message: its own request's trace, run, step, tenant and job), and
`lifecycle_sent_at` the time. Running (a worker): the task opens that context, so its
log lines carry it and the messages it sends pass it on; the queue wait and, for jobs,
the duration and outcome are counted.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from celery import Task, signals

from orchestrator.observability import metrics, tracing
from orchestrator.observability.broker_view import SENT_AT_HEADER
from orchestrator.observability.context import close_context, current, open_context

log = logging.getLogger("orchestrator.runtime.tasks")

CONTEXT_HEADER = "lifecycle_context"

_started: dict[str, float] = {}
_started_lock = threading.Lock()


def job_fields(args: Any) -> dict[str, Any]:
    """The context of a job message: its JobRequest body names everything."""
    if not args or not isinstance(args[0], dict) or "job_id" not in args[0]:
        return {}
    body = args[0]
    return {
        "trace_id": body.get("trace_id"),
        "run_id": body.get("run_id"),
        "step": body.get("step"),
        "tenant": body.get("tenant_id"),
        "job_id": body.get("job_id"),
    }


def _message_args(body: Any) -> Any:
    if isinstance(body, tuple | list) and body:  # protocol 2: (args, kwargs, embed)
        return body[0]
    return body.get("args") if isinstance(body, dict) else None


def on_publish(
    sender: str | None = None, body: Any = None, headers: dict[str, Any] | None = None, **_: Any
) -> None:
    if headers is None:
        return
    fields = {**current(), **{k: v for k, v in job_fields(_message_args(body)).items() if v}}
    headers[CONTEXT_HEADER] = {k: str(v) for k, v in fields.items()}
    headers[SENT_AT_HEADER] = time.time()


def on_prerun(
    task_id: str | None = None, task: Task | None = None, args: Any = None, **_: Any
) -> None:
    if task is None or task_id is None:
        return
    request = task.request
    carried = getattr(request, CONTEXT_HEADER, None) or {}
    open_context(**{**carried, **{k: v for k, v in job_fields(args).items() if v}})
    _count_queue_wait(request)
    with _started_lock:
        _started[task_id] = time.monotonic()
    log.info(
        "task started", extra={"task": task.name, "task_id": task_id, "retries": request.retries}
    )


def _count_queue_wait(request: Any) -> None:
    sent_at = getattr(request, SENT_AT_HEADER, None)
    if not isinstance(sent_at, int | float):
        return
    eta = request.eta
    if isinstance(eta, str):  # a countdown (retry backoff) is not time spent waiting
        from datetime import datetime

        sent_at = max(sent_at, datetime.fromisoformat(eta).timestamp())
    queue = (request.delivery_info or {}).get("routing_key") or "unknown"
    metrics.message_waited(queue, time.time() - sent_at)


def on_postrun(
    task_id: str | None = None,
    task: Task | None = None,
    args: Any = None,
    retval: Any = None,
    state: str | None = None,
    **_: Any,
) -> None:
    with _started_lock:
        began = _started.pop(task_id or "", None)
    seconds = time.monotonic() - began if began is not None else 0.0
    # A job failed for good raises an exception naming its outcome (orchestrator.jobs.failed).
    outcome = (
        retval
        if state == "SUCCESS" and isinstance(retval, str)
        else getattr(retval, "outcome", None) or (state or "unknown").lower()
    )
    kind = args[0].get("kind") if job_fields(args) else None
    if kind:
        metrics.job_finished(str(kind), outcome, seconds)
    log.info(
        "task finished",
        extra={
            "task": task.name if task else None,
            "task_id": task_id,
            "state": state,
            "outcome": outcome,
            "seconds": round(seconds, 4),
        },
    )
    close_context()


def on_setup_logging(loglevel: Any = None, logfile: str | None = None, **_: Any) -> None:
    """Workers and beat log JSON lines (Celery leaves logging to us once this is connected)."""
    from orchestrator.observability.logs import configure_logging

    stream = open(logfile, "a", buffering=1) if logfile else None  # noqa: SIM115 (process-long)
    configure_logging(level=loglevel or None, stream=stream)
    tracing.configure()


def on_worker_init(**_: Any) -> None:
    """Before the pool forks: a fresh multiprocess directory (files of a previous run's
    processes would be added to this one's)."""
    from orchestrator.config.settings import get_settings
    from orchestrator.observability.exposition import prepare_multiprocess_dir

    prepare_multiprocess_dir()
    problem = get_settings().storage_problem
    if problem is not None:
        log.warning("storage is not shared: %s", problem)


def on_worker_ready(**_: Any) -> None:
    from orchestrator.observability.exposition import serve_worker_metrics

    serve_worker_metrics()


def on_worker_process_shutdown(pid: int | None = None, **_: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]


def install() -> None:
    """Connect the handlers (once; dispatch_uid makes a second call a no-op)."""
    signals.before_task_publish.connect(on_publish, weak=False, dispatch_uid="lc_publish")
    signals.task_prerun.connect(on_prerun, weak=False, dispatch_uid="lc_prerun")
    signals.task_postrun.connect(on_postrun, weak=False, dispatch_uid="lc_postrun")
    signals.setup_logging.connect(on_setup_logging, weak=False, dispatch_uid="lc_logging")
    signals.worker_init.connect(on_worker_init, weak=False, dispatch_uid="lc_init")
    signals.worker_ready.connect(on_worker_ready, weak=False, dispatch_uid="lc_ready")
    signals.worker_process_shutdown.connect(
        on_worker_process_shutdown, weak=False, dispatch_uid="lc_process_shutdown"
    )
