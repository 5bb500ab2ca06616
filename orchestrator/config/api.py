"""Settings of the HTTP API (prefix LIFECYCLE_API_), beside the fleet's own settings."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ApiSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_API_", env_file=".env", extra="ignore")

    max_body_bytes: int = Field(
        1024 * 1024, ge=1024, description="Largest request body, except uploads."
    )
    multipart_overhead_bytes: int = Field(
        64 * 1024, ge=1024, description="Room for multipart framing on uploads."
    )
    max_signal_wait_s: float = Field(
        10.0, ge=0, description="Longest a caller may wait for a fate."
    )
    embedded_worker: bool = Field(
        True,
        description="On the embedded default (memory:// broker), migrate the database "
        "and run a Celery worker inside the API process, so signals are "
        "processed with nothing else running.",
    )
    idempotency_stale_s: float = Field(
        120.0, ge=1, description="An unfinished idempotent request older than this is retried."
    )
