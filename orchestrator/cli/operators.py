"""Who an operator acts as, for which tenant, and waiting for a command's fate.

The CLI runs with the fleet's own database credentials, so an operator may act on any
tenant's run: the run's tenant is looked up and the command is recorded under
`operator:<login>` (or `--actor`), which the audit trail keeps.
"""

from __future__ import annotations

import getpass
import uuid

from sqlalchemy import select

from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.db.models import WorkflowRun
from orchestrator.db.session import transaction


def operator_id(actor: str | None) -> str:
    if actor:
        return actor
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = "unknown"
    return f"operator:{login}"


def parse_run_id(value: str) -> uuid.UUID:
    try:
        return uuid.UUID(value)
    except ValueError as error:
        raise InvalidInput(f"{value!r} is not a run id (a UUID)") from error


def operator_for(run_id: uuid.UUID, actor: str | None = None) -> Actor:
    """An actor of the run's own tenant, seeing every organization."""
    with transaction() as session:
        tenant = session.scalar(select(WorkflowRun.tenant_id).where(WorkflowRun.id == run_id))
    if tenant is None:
        raise NotFound(f"workflow run {run_id} not found")
    return Actor(tenant_id=tenant, actor_id=operator_id(actor))


def new_key(command: str, run_id: uuid.UUID) -> str:
    """A fresh idempotency key, for a command given without `--key` (printed, so the
    operator can repeat it safely)."""
    return f"cli:{command}:{run_id}:{uuid.uuid4().hex[:12]}"
