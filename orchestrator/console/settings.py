"""The console's signing secret: the configured one, or one generated once per home."""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path

from orchestrator.config.console import ConsoleSettings
from orchestrator.config.settings import get_settings


def get_console_settings() -> ConsoleSettings:
    return get_settings().console


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
