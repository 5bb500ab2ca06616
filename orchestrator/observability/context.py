"""The context of the work at hand: trace_id, run_id, step, tenant (and job_id).

Every log line carries it; Celery message headers carry it to the next process. The
context is a dict held in a ContextVar: `bound()` opens a nested one for a block, and
`enrich()` adds to the open one in place, so the code that opened it (a request's
middleware, a task's prerun hook) sees what was learnt deeper down (the signal's trace).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

FIELDS = ("trace_id", "run_id", "step", "tenant", "job_id")

_current: ContextVar[dict[str, str] | None] = ContextVar("lifecycle_context", default=None)


def _clean(fields: dict[str, Any]) -> dict[str, str]:
    return {
        name: str(value)
        for name, value in fields.items()
        if name in FIELDS and value is not None and str(value) != ""
    }


def current() -> dict[str, str]:
    return dict(_current.get() or {})


def open_context(**fields: Any) -> None:
    """Start a fresh context (a request, a task): nothing of the previous one remains."""
    _current.set(_clean(fields))


def close_context() -> None:
    _current.set(None)


def enrich(**fields: Any) -> None:
    """Set fields of the open context, in place (None removes a field)."""
    context = _current.get()
    if context is None:
        context = {}
        _current.set(context)
    for name in fields:
        context.pop(name, None)
    context.update(_clean(fields))


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """A nested context for one block; the outer one is back afterwards."""
    token = _current.set({**(_current.get() or {}), **_clean(fields)})
    try:
        yield
    finally:
        _current.reset(token)
