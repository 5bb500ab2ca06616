"""Sweep markers: an effect fires only for the sweep whose marker insert won."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from orchestrator.db.ops_models import SweepMark
from orchestrator.db.sql import insert_for


def claim_mark(
    session: Session,
    run_id: uuid.UUID,
    mark: str,
    key: str,
    now: datetime,
    details: dict[str, Any] | None = None,
) -> bool:
    """True for exactly one caller per (run, mark, key), however many sweeps race."""
    statement = (
        insert_for(session, SweepMark)
        .values(run_id=run_id, mark=mark, key=key, details=details or {}, created_at=now)
        .on_conflict_do_nothing(index_elements=["run_id", "mark", "key"])
        .returning(SweepMark.id)
    )
    return session.execute(statement).scalar() is not None
