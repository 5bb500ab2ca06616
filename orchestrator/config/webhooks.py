"""Webhook delivery configuration (prefix LIFECYCLE_WEBHOOK_)."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class WebhookSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_WEBHOOK_", env_file=".env", extra="ignore"
    )

    timeout_s: float = Field(10, gt=0, description="Per POST.")
    max_attempts: int = Field(8, ge=1, description="Then the delivery is marked failed.")
    backoff_base_s: float = Field(
        30, ge=0, description="Wait after the first failure; doubles after each further one."
    )
    backoff_max_s: float = Field(3600, ge=0)
    lease_s: float = Field(
        120,
        gt=0,
        description="A delivery still 'delivering' after this was interrupted and is tried again.",
    )
    console_url: str = Field(
        "http://127.0.0.1:8000/console",
        description="Where people open the console: links in events.",
    )

    def backoff(self, attempts: int) -> timedelta:
        seconds = min(self.backoff_base_s * 2 ** max(attempts - 1, 0), self.backoff_max_s)
        return timedelta(seconds=seconds)
