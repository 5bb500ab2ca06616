"""Webhook delivery configuration (prefix LIFECYCLE_WEBHOOK_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from orchestrator.config.backoff import RetryBackoff


class WebhookSettings(RetryBackoff):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_WEBHOOK_", env_file=".env", extra="ignore"
    )

    timeout_s: float = Field(10, gt=0, description="Per POST.")
    max_attempts: int = Field(8, ge=1, description="Then the delivery is marked failed.")
    lease_s: float = Field(
        120,
        gt=0,
        description="A delivery still 'delivering' after this was interrupted and is tried again.",
    )
    console_url: str = Field(
        "http://127.0.0.1:8000/console",
        description="Where people open the console: links in events.",
    )
