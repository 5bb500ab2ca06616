"""Liveness (/healthz), readiness (/readyz), the fleet's health report (/health) and
Prometheus metrics (/metrics).

Readiness asks what a request needs: the database answers, the broker accepts a
connection, and every queue of the fleet has a worker consuming it (asked over the
broker with a short timeout). Unready answers 503 with what is missing. The health
report adds the scheduler: beat is healthy while every sweep it schedules keeps starting
(its last sweep time, and each sweep's, are in the report).
"""

from __future__ import annotations

from datetime import datetime

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST
from pydantic import BaseModel
from sqlalchemy import text

from orchestrator.config.settings import get_settings
from orchestrator.db.session import read_transaction
from orchestrator.engine.consumers import queue_consumers
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import QUEUES
from orchestrator.observability.exposition import metrics_text
from orchestrator.observability.queue_metrics import QueueCollector
from orchestrator.sweeps.pulse import OVERDUE_AFTER_INTERVALS, SweepPulse, beat_pulse

router = APIRouter(tags=["health"])
_QUEUES = QueueCollector(get_app, QUEUES)


class Liveness(BaseModel):
    status: str


class Check(BaseModel):
    ok: bool
    detail: str = ""
    queues: dict[str, list[str]] | None = None
    """Workers: each queue and the workers consuming it."""


class Readiness(BaseModel):
    status: str
    checks: dict[str, Check]


class BeatCheck(Check):
    last_sweep_at: datetime | None = None
    """When a scheduled sweep last started: beat's pulse."""
    sweeps: list[SweepPulse] | None = None


class HealthReport(BaseModel):
    status: str
    checks: dict[str, BeatCheck | Check]


@router.get("/healthz", response_model=Liveness, summary="Liveness: the process serves")
def healthz() -> Liveness:
    return Liveness(status="ok")


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "Not ready: see checks"}},
    summary="Readiness: database, broker and a worker on every queue",
)
def readyz() -> JSONResponse:
    checks = {"database": check_database(), "broker": check_broker(), "workers": check_workers()}
    ready = all(check.ok for check in checks.values())
    body = Readiness(status="ready" if ready else "unready", checks=checks)
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True), status_code=200 if ready else 503
    )


@router.get(
    "/health",
    response_model=HealthReport,
    responses={503: {"model": HealthReport, "description": "Unhealthy: see checks"}},
    summary="The fleet's health: database, broker, workers and beat (its last sweep)",
)
def health() -> JSONResponse:
    body = health_report()
    return JSONResponse(
        body.model_dump(mode="json", exclude_none=True),
        status_code=200 if body.status == "healthy" else 503,
    )


def health_report() -> HealthReport:
    checks: dict[str, BeatCheck | Check] = {
        "database": check_database(),
        "broker": check_broker(),
        "workers": check_workers(),
        "beat": check_beat(),
    }
    healthy = all(check.ok for check in checks.values())
    return HealthReport(status="healthy" if healthy else "unhealthy", checks=checks)


def check_beat() -> BeatCheck:
    if get_settings().is_embedded_broker:
        return BeatCheck(ok=True, detail="embedded: nothing schedules sweeps (`lifecycle sweep`)")
    try:
        pulse = beat_pulse()
    except Exception as error:
        return BeatCheck(ok=False, detail=_short(error))
    overdue = pulse.overdue
    if pulse.last_sweep_at is None:
        detail = "beat has not swept yet"
    elif overdue:
        detail = f"not started within {OVERDUE_AFTER_INTERVALS} intervals: {', '.join(overdue)}"
    else:
        detail = ""
    return BeatCheck(
        ok=not overdue, detail=detail, last_sweep_at=pulse.last_sweep_at, sweeps=list(pulse.sweeps)
    )


@router.get("/metrics", summary="Prometheus metrics", response_class=Response)
def metrics() -> Response:
    return Response(metrics_text(True, _QUEUES), media_type=CONTENT_TYPE_LATEST)


def check_database() -> Check:
    try:
        with read_transaction() as session:
            session.execute(text("SELECT 1"))
    except Exception as error:
        return Check(ok=False, detail=_short(error))
    return Check(ok=True)


def check_broker() -> Check:
    timeout = get_settings().observability.readiness_timeout_s
    try:
        with get_app().connection_for_read(connect_timeout=timeout) as connection:
            connection.ensure_connection(max_retries=1, timeout=timeout)
    except Exception as error:
        return Check(ok=False, detail=_short(error))
    return Check(ok=True)


def check_workers() -> Check:
    if get_settings().is_embedded_broker:
        embedded = get_settings().api.embedded_worker
        return Check(
            ok=embedded,
            detail="embedded worker in this process"
            if embedded
            else "memory broker and no embedded worker: nothing consumes",
        )
    timeout = get_settings().observability.readiness_timeout_s
    try:
        consumers: dict[str, list[str]] = {q: [] for q in QUEUES} | queue_consumers(timeout)
    except Exception as error:
        return Check(ok=False, detail=_short(error))
    missing = [queue for queue in QUEUES if not consumers[queue]]
    detail = f"no worker consumes {', '.join(missing)}" if missing else ""
    return Check(ok=not missing, detail=detail, queues=consumers)


def _short(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:300]
