"""Settings of the web console (prefix LIFECYCLE_CONSOLE_)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

#: How many documents the console's upload form carries at once (its body limit's multiple).
CONSOLE_UPLOAD_FILES = 20


class ConsoleSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_CONSOLE_", env_file=".env", extra="ignore"
    )

    secret: str | None = Field(
        None,
        min_length=32,
        description="Signs session cookies and CSRF tokens. Default: a random secret kept in "
        "the home directory, shared by every API process on this machine.",
    )
    session_ttl_s: int = Field(8 * 3600, ge=60, description="How long a sign-in lasts.")
    stuck_after_s: float = Field(
        3600.0, gt=0, description="A run unchanged this long is listed as stuck."
    )
    poll_interval_s: float = Field(3.0, gt=0, description="How often a run page refreshes.")
    claim_ttl_s: float = Field(
        1800.0, gt=0, description="A reviewer's claim on a gate's review lapses after this."
    )
