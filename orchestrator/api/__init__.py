"""The producer HTTP API (FastAPI). Serve it with `uvicorn orchestrator.api:app`."""

from orchestrator.api.app import create_app

app = create_app()

__all__ = ["app", "create_app"]
