"""Retrying with a doubling wait: webhook deliveries and effects outside the database."""

from __future__ import annotations

from datetime import timedelta

from pydantic import Field
from pydantic_settings import BaseSettings


class RetryBackoff(BaseSettings):
    backoff_base_s: float = Field(
        30, ge=0, description="Wait after the first failure; doubles after each further one."
    )
    backoff_max_s: float = Field(3600, ge=0)

    def backoff(self, attempts: int) -> timedelta:
        seconds = min(self.backoff_base_s * 2 ** max(attempts - 1, 0), self.backoff_max_s)
        return timedelta(seconds=seconds)
