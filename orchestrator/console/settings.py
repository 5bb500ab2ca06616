"""Settings of the console (prefix LIFECYCLE_CONSOLE_)."""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from orchestrator.settings import get_settings


class ConsoleSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_CONSOLE_", env_file=".env",
                                      extra="ignore")

    secret: str | None = Field(
        None, min_length=32,
        description="Signs session cookies and CSRF tokens. Default: a random secret kept in "
                    "the home directory, shared by every API process on this machine.")
    session_ttl_s: int = Field(8 * 3600, ge=60, description="How long a sign-in lasts.")
    stuck_after_s: float = Field(3600.0, gt=0,
                                 description="A run unchanged this long is listed as stuck.")
    public_url: str = Field("http://127.0.0.1:8000",
                            description="Where people reach the API; links in webhooks.")
    poll_interval_s: float = Field(3.0, gt=0, description="How often a run page refreshes.")


@lru_cache(maxsize=1)
def get_console_settings() -> ConsoleSettings:
    return ConsoleSettings()


def signing_secret() -> bytes:
    """The configured secret, or one generated once and kept beside the database."""
    configured = get_console_settings().secret
    if configured:
        return configured.encode()
    return _home_secret(get_settings().home.resolve())


@lru_cache(maxsize=4)
def _home_secret(home: Path) -> bytes:
    path = home / "console-secret"
    if not path.exists():
        home.mkdir(parents=True, exist_ok=True)
        candidate = home / f".console-secret.{secrets.token_hex(6)}"
        candidate.write_text(secrets.token_urlsafe(48))
        candidate.chmod(0o600)
        try:  # a hard link fails if another process linked its secret first: use that one
            os.link(candidate, path)
        except FileExistsError:
            pass
        finally:
            candidate.unlink(missing_ok=True)
    return path.read_text().strip().encode()
