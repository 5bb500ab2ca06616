"""The producer API's ASGI application (`orchestrator.api:app`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool
from fastapi.routing import APIRoute
from fastapi_offline import FastAPIOffline

from orchestrator.api import health, openapi_document
from orchestrator.api.allowed_methods import OptionsMiddleware
from orchestrator.api.content_type_options import NoSniffMiddleware
from orchestrator.api.limits import BodyLimitMiddleware
from orchestrator.api.problems import install_problem_handlers
from orchestrator.api.routers import (
    amendments,
    approval_events,
    artifacts,
    assessments,
    catalogs,
    definitions,
    document_judgements,
    evidence,
    evidence_requests,
    gates,
    handoffs,
    kb,
    lifecycle,
    oidc_groups,
    operations,
    problems,
    public_entry,
    reassessments,
    reviews,
    risk_proposals,
    risks,
    roles,
    roster,
    runs,
)
from orchestrator.api.unexpected import UnexpectedErrorMiddleware
from orchestrator.config.settings import get_settings
from orchestrator.console import install as install_console
from orchestrator.observability.asgi import install as install_observability
from orchestrator.runtime import registrations as _registrations  # noqa: F401 (handlers)

DESCRIPTION = """\
Start and drive SCF assessment lifecycles: durable, resumable runs with mandatory human
approvals.

Every request carries an API key (`Authorization: Bearer <key>`) bound to one tenant;
another tenant's ids answer 404. Errors are RFC 9457 problem details with a stable `code`;
their `type` (`/problems/{code}`) is a page explaining the code.
Every POST honours an `Idempotency-Key` header.
"""


@asynccontextmanager
async def lifespan(_: FastAPI) -> AsyncIterator[None]:
    """On the embedded default nothing else runs: bring the schema and a worker along."""
    if not (get_settings().api.embedded_worker and get_settings().is_embedded_broker):
        yield
        return
    from orchestrator.db.migrate import upgrade
    from orchestrator.engine.messages import get_app
    from orchestrator.runtime.embedded import embedded_worker

    await run_in_threadpool(upgrade)
    with embedded_worker(get_app()):
        yield


def _operation_id(route: APIRoute) -> str:
    """Short, stable operation ids (`lifecycle_start`, `runs_index`) for generated clients."""
    tag = str(route.tags[0]).replace(" ", "_") if route.tags else "api"
    return f"{tag}_{route.name}"


def create_app() -> FastAPI:
    # /docs and /redoc load their scripts and styles from the app, never from a CDN.
    app = FastAPIOffline(
        title="Assessment lifecycle producer API",
        version="1.0.0",
        description=DESCRIPTION,
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
        static_url="/docs-assets",
        swagger_ui_parameters={"validatorUrl": None},
    )
    install_problem_handlers(app)
    # Innermost of ours: the access log and metrics around it see the 500 it answers.
    app.add_middleware(UnexpectedErrorMiddleware)
    app.add_middleware(BodyLimitMiddleware)
    for module in (
        assessments,
        lifecycle,
        runs,
        artifacts,
        approval_events,
        amendments,
        gates,
        document_judgements,
        evidence,
        evidence_requests,
        risks,
        risk_proposals,
        public_entry,
        reassessments,
        operations,
        handoffs,
        reviews,
        definitions,
        roles,
        oidc_groups,
        roster,
        kb,
        catalogs,
        health,
        problems,
    ):
        app.include_router(module.router)
    openapi_document.install(app)
    install_console(app)
    install_observability(app)
    # Outside the routes: OPTIONS on any served path is answered, not refused.
    app.add_middleware(OptionsMiddleware)
    # Outermost: every answer carries it, whichever layer gave it.
    app.add_middleware(NoSniffMiddleware)
    return app
