"""Console sessions ended on the server: signing out records the session's id, and a
cookie naming an ended session signs nobody in, however long it has left."""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import delete, select

from orchestrator.contracts.clock import utcnow
from orchestrator.db.apikey_models import EndedConsoleSession
from orchestrator.db.busy import retry_busy
from orchestrator.db.session import read_transaction, transaction
from orchestrator.db.sql import insert_for


@retry_busy
def end_session(session_id: str, expires_at: float) -> None:
    """Record the session as ended (once), and forget sessions whose cookies expired."""
    now = utcnow()
    with transaction() as session:
        session.execute(delete(EndedConsoleSession).where(EndedConsoleSession.expires_at < now))
        # Insert-if-absent: two sign-outs of one session at once both end it, neither fails.
        session.execute(
            insert_for(session, EndedConsoleSession)
            .values(
                session_id=session_id,
                ended_at=now,
                expires_at=datetime.fromtimestamp(expires_at, UTC),
            )
            .on_conflict_do_nothing(index_elements=["session_id"])
        )


def session_ended(session_id: str) -> bool:
    with read_transaction() as session:
        found = session.scalar(
            select(EndedConsoleSession.session_id).where(
                EndedConsoleSession.session_id == session_id
            )
        )
    return found is not None
