"""Mounting the console on the API's FastAPI app: its routers, static files and pages."""

from __future__ import annotations

from pathlib import Path

from fastapi import APIRouter, FastAPI
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"


def routers() -> list[APIRouter]:
    """The console's routers, in the order they are mounted (every console route is in one)."""
    from orchestrator.console import (
        pages_assessments,
        pages_auth,
        pages_evidence_requests,
        pages_handoffs,
        pages_judgements,
        pages_oidc,
        pages_ops,
        pages_quality,
        pages_queue,
        pages_review,
        pages_risks,
        pages_roster,
        pages_runs,
        pages_settings,
        pages_sign_in_groups,
    )

    return [
        module.router
        for module in (
            pages_auth,
            pages_oidc,
            pages_queue,
            pages_assessments,
            pages_roster,
            pages_evidence_requests,
            pages_risks,
            pages_judgements,
            pages_runs,
            pages_review,
            pages_ops,
            pages_handoffs,
            pages_quality,
            pages_settings,
            pages_sign_in_groups,
        )
    ]


def install(app: FastAPI) -> None:
    from orchestrator.console.error_pages import ConsoleErrorPages

    for router in routers():
        app.include_router(router)
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")
    # Outside the API's error middleware: its JSON answers to console addresses become pages.
    app.add_middleware(ConsoleErrorPages)
