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
        pages_ops,
        pages_queue,
        pages_review,
        pages_runs,
    )

    for module in (pages_auth, pages_queue, pages_assessments, pages_runs, pages_review, pages_ops):
        app.include_router(module.router)
    app.mount("/console/static", StaticFiles(directory=STATIC_DIR), name="console-static")
