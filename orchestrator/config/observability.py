"""Settings of logs, metrics and tracing (prefix LIFECYCLE_)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class ObservabilitySettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_", env_file=".env", extra="ignore")

    log_format: Literal["json", "text"] = Field(
        "json", description="json: one object per line (services); text: for people."
    )
    log_level: str = Field(
        "INFO", description="Level of the API's logs; Celery's -l wins for workers and beat."
    )
    metrics_port: int | None = Field(
        None,
        ge=1,
        le=65535,
        description="Workers serve Prometheus metrics on this port (off when unset). With "
        "the prefork pool set PROMETHEUS_MULTIPROC_DIR too.",
    )
    otel_enabled: bool = Field(
        False,
        description="Trace with OpenTelemetry, exported over OTLP (needs the `otel` extra; "
        "OTEL_EXPORTER_OTLP_ENDPOINT says where).",
    )
    readiness_timeout_s: float = Field(
        1.0,
        gt=0,
        le=30,
        description=(
            "How long /readyz waits for the broker and workers, and the lost-jobs sweep for "
            "the workers to say which queues they consume."
        ),
    )
