"""Retrying with a doubling, jittered wait: webhook deliveries and effects outside the
database (`contracts.jitter`: endpoints that fail together are not retried together)."""

from __future__ import annotations

import random
from datetime import timedelta

from pydantic import Field
from pydantic_settings import BaseSettings

from orchestrator.contracts.jitter import full_jitter


class RetryBackoff(BaseSettings):
    backoff_base_s: float = Field(
        30,
        ge=0,
        description="Cap of the wait after the first failure, doubling after each further one; "
        "each wait is drawn between zero and its cap (full jitter).",
    )
    backoff_max_s: float = Field(3600, ge=0)

    def backoff(self, attempts: int, rng: random.Random | None = None) -> timedelta:
        """A wait of at most base·2^(attempts-1), capped; drawn afresh at each call."""
        seconds = full_jitter(self.backoff_base_s, attempts - 1, self.backoff_max_s, rng)
        return timedelta(seconds=seconds)
