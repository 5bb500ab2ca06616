"""Mounting the console on the API's FastAPI app: its routers, static files and pages."""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"


def install(app: FastAPI) -> None:
    from orchestrator.console import (
        pages_assessments,
        pages_auth,
        pages_handoffs,
        pages_ops,
        pages_quality,
        pages_queue,
        pages_review,
        pages_runs,
        pages_settings,
    )
    from orchestrator.console.error_pages import ConsoleErrorPages

    for module in (
        pages_auth,
        pages_queue,
        pages_assessments,
        pages_runs,
        pages_review,
        pages_ops,
        pages_handoffs,
        pages_quality,
        pages_settings,
    ):
        app.include_router(module.router)
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")
    # Outside the API's error middleware: its JSON answers to console addresses become pages.
    app.add_middleware(ConsoleErrorPages)
