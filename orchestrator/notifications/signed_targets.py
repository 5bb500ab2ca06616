"""What a tenant's webhook subscriptions and export targets share: a URL we POST signed
bodies to, a secret, and rows only the tenant sees."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.db.session import transaction
from orchestrator.notifications.signing import new_secret

MIN_SECRET_LENGTH = 24


def secret_or_new(secret: str | None, what: str) -> str:
    if secret is not None and len(secret) < MIN_SECRET_LENGTH:
        raise InvalidInput(f"a {what} secret needs at least {MIN_SECRET_LENGTH} characters")
    return secret or new_secret()


def add_once(row: Any, duplicate: str) -> None:
    """Insert the row; the same URL twice for one tenant is refused, not duplicated."""
    try:
        with transaction() as session:
            session.add(row)
    except IntegrityError as error:
        raise InvalidInput(duplicate) from error


def tenant_rows(model: Any, actor: Actor) -> list[Any]:
    """The tenant's rows of `model` (a table with tenant_id and created_at), oldest first."""
    with transaction() as session:
        query = select(model).where(model.tenant_id == actor.tenant_id)
        return list(session.scalars(query.order_by(model.created_at)))


def deactivate_row(model: Any, actor: Actor, row_id: uuid.UUID, what: str) -> Any:
    """Stop new traffic to it; what was sent stays on record."""
    with transaction() as session:
        row = session.get(model, row_id)
        if row is None or row.tenant_id != actor.tenant_id:
            raise NotFound(f"{what} {row_id} not found")
        row.active = False
        return row
