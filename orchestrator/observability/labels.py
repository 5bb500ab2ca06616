"""How messages read in Flower and in worker logs: which run, step and job they serve.

Celery shows a message's `argsrepr`/`kwargsrepr` instead of its arguments; a JobRequest
body would show as a long dict, so jobs read `(run=..., step=..., job=...)` instead.
"""

from __future__ import annotations

import uuid
from typing import Any


def job_argsrepr(body: dict[str, Any]) -> str:
    return (
        f"(run={body.get('run_id')}, step={body.get('step')}, job={body.get('job_id')}, "
        f"attempt={body.get('attempt')})"
    )


def job_kwargsrepr(body: dict[str, Any]) -> str:
    return repr(
        {
            "kind": body.get("kind"),
            "tenant": body.get("tenant_id"),
            "trace_id": body.get("trace_id"),
        }
    )


def coordinate_argsrepr(run_id: uuid.UUID | str) -> str:
    return f"(run={run_id})"
