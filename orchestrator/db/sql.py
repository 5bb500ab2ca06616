"""Small SQL helpers the sweeps share: dialect-aware INSERT ... ON CONFLICT, UTC times."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session


def insert_for(session: Session, model: Any) -> Any:
    """An INSERT that supports ON CONFLICT on both PostgreSQL and SQLite."""
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    return dialect.insert(model)


def is_postgres(session: Session) -> bool:
    return session.get_bind().dialect.name == "postgresql"


def aware(value: datetime) -> datetime:
    """SQLite hands timestamps back without their zone; every stored time is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
