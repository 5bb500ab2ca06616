"""Who an operator acts as, for which tenant, and waiting for a command's fate.

The CLI runs with the fleet's own database credentials, so an operator may act on any
tenant's run: the run's tenant is looked up and the command is recorded under
`operator:<login>` (or `--actor`), which the audit trail keeps.
"""

from __future__ import annotations

import getpass
import uuid
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from orchestrator.contracts.identity import Actor


def operator_id(actor: str | None) -> str:
    if actor:
        return actor
    try:
        login = getpass.getuser()
    except (KeyError, OSError):
        login = "unknown"
    return f"operator:{login}"


def parse_run_id(value: str) -> uuid.UUID:
    from orchestrator.contracts.errors import InvalidInput

    try:
        return uuid.UUID(value)
    except ValueError as error:
        raise InvalidInput(f"{value!r} is not a run id (a UUID)") from error


def operator_in(tenant_id: str, actor: str | None = None) -> Actor:
    """The operator (or `actor`) acting in a tenant, seeing every organization."""
    # Imported here: the commands' modules load this one for `--help` too.
    from orchestrator.contracts.identity import Actor

    return Actor(tenant_id=tenant_id, actor_id=operator_id(actor))


def operator_for(run_id: uuid.UUID, actor: str | None = None) -> Actor:
    """An actor of the run's own tenant, seeing every organization."""
    from orchestrator.service.operator_lookups import tenant_of_run

    return operator_in(tenant_of_run(run_id), actor)


def new_key(command: str, run_id: uuid.UUID) -> str:
    """A fresh idempotency key, for a command given without `--key` (printed, so the
    operator can repeat it safely)."""
    return f"cli:{command}:{run_id}:{uuid.uuid4().hex[:12]}"
