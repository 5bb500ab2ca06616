"""Outbound work held under a lease: webhook deliveries and effects outside the database.

A row waits `pending` until it is due. One worker claims it (a guarded UPDATE: pending and
due -> working, attempts + 1, due again when the lease lapses), does the work outside any
transaction, and writes the outcome only while it still holds that attempt: a worker
whose lease lapsed cannot overwrite a newer attempt. The sweep settles lapsed leases
(the worker was lost) and sends the due rows to workers. A failed attempt waits a
jittered, doubling backoff (config.backoff) and is tried again, up to `max_attempts`.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import ColumnElement, Select, and_, select, update
from sqlalchemy.orm import Session

from orchestrator.config.settings import get_settings
from orchestrator.db.session import transaction


@dataclass(frozen=True)
class LeasedRows:
    """A table of outbound work: its columns `id`, `status`, `attempts` and
    `next_attempt_at` (when it is due; while working, when the lease lapses)."""

    model: Any
    pending: str
    working: str
    stamp: str | None = None
    """A column set to the time of every change the lease makes (e.g. `updated_at`)."""

    def claim(
        self, session: Session, row_id: object, now: datetime, retries: Retries
    ) -> int | None:
        """The attempt number now held, or None when the row was not pending and due."""
        m = self.model
        return session.scalar(
            update(m)
            .where(m.id == row_id, m.status == self.pending, m.next_attempt_at <= now)
            .values(
                status=self.working,
                attempts=m.attempts + 1,
                next_attempt_at=now + timedelta(seconds=retries.lease_s),
                **self._stamped(now),
            )
            .returning(m.attempts)
            .execution_options(synchronize_session=False)
        )

    def held(self, row_id: object, attempt: int) -> ColumnElement[bool]:
        """The row is still working on this attempt: nobody took it over."""
        m = self.model
        return and_(m.id == row_id, m.status == self.working, m.attempts == attempt)

    def holds(self, row: Any, attempt: int) -> bool:
        """The same for a row already read (and locked)."""
        return row is not None and (row.status, row.attempts) == (self.working, attempt)

    def release(self, session: Session, row_id: object, attempt: int, **values: Any) -> bool:
        """Write the outcome of an attempt still held; False when it was taken over."""
        moved = session.execute(
            update(self.model)
            .where(self.held(row_id, attempt))
            .values(**values)
            .execution_options(synchronize_session=False)
        )
        return bool(moved.rowcount)  # type: ignore[attr-defined]

    def lapsed(self, now: datetime, *columns: Any) -> Select[Any]:
        """Working rows whose lease lapsed (their worker was lost), oldest lease first."""
        m = self.model
        return (
            select(*(columns or (m,)))
            .where(m.status == self.working, m.next_attempt_at < now)
            .order_by(m.next_attempt_at)
            .limit(get_settings().sweeps.batch)
        )

    def dispatch_due(self, now: datetime, dispatch: Callable[[Sequence[Any]], None]) -> int:
        """Send the pending rows due before the sweeps' grace to workers; how many."""
        m, sweeps = self.model, get_settings().sweeps
        with transaction() as session:
            due = list(
                session.scalars(
                    select(m.id)
                    .where(m.status == self.pending, m.next_attempt_at <= now - sweeps.grace)
                    .order_by(m.next_attempt_at)
                    .limit(sweeps.batch)
                )
            )
        dispatch(due)
        return len(due)

    def _stamped(self, now: datetime) -> dict[str, datetime]:
        return {self.stamp: now} if self.stamp else {}


class Retries(Protocol):
    """The settings of a kind of outbound work (config.webhooks, config.effects)."""

    lease_s: float
    max_attempts: int

    def backoff(self, attempts: int, rng: random.Random | None = None) -> timedelta: ...


def exhausted(attempt: int, retries: Retries) -> bool:
    """No attempt is left after this one: the work gives up."""
    return attempt >= retries.max_attempts
