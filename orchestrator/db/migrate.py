"""Alembic, driven from code: `upgrade()` brings any database to the current schema."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config

from orchestrator.config.settings import get_settings

MIGRATIONS = Path(__file__).parent / "migrations"


def alembic_config(url: str | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.set_main_option("sqlalchemy.url", url or get_settings().resolved_database_url)
    return config


def upgrade(url: str | None = None, revision: str = "head") -> None:
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str | None = None, revision: str = "base") -> None:
    command.downgrade(alembic_config(url), revision)
