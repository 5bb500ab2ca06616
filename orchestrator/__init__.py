"""Assessment lifecycle fleet: durable SCF assessments with mandatory human approvals.

`celery -A orchestrator ...` finds the Celery app here as `orchestrator.app`.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # Lazy, so importing the contracts or the lifecycle never builds a Celery app.
    if name in ("app", "celery"):
        from orchestrator.engine.messages import get_app

        return get_app()
    raise AttributeError(name)
