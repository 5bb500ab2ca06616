"""Effects outside the database and their handoffs (prefix LIFECYCLE_EFFECT_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import SettingsConfigDict

from orchestrator.config.backoff import RetryBackoff


class EffectSettings(RetryBackoff):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_EFFECT_", env_file=".env", extra="ignore"
    )

    timeout_s: float = Field(
        10, gt=0, description="Per request; no answer within it after sending: outcome unknown."
    )
    max_attempts: int = Field(
        5, ge=1, description="Refused this often (or unknown, when idempotent): a handoff."
    )
    lease_s: float = Field(
        120,
        gt=0,
        description="A worker making an effect holds it this long; past it the worker was lost.",
    )
    claim_s: float = Field(
        900, gt=0, description="How long an operator's claim on a handoff holds others off."
    )
