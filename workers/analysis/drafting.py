"""Each kind's drafting function, registered where it is written.

`@drafts("soa")` on the function that drafts a kind (JobContext -> content),
`prepares("soa")` on what it computes ahead, outside any transaction (JobRequest -> None),
and `@records("gap_analysis")` on what a kind writes beside its saved draft, in the job's
transaction (JobContext, content, version -> None): drafting only reads.
The analysis queue's service looks them up by the step's declared kind
(orchestrator.contracts.artifact_registry).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from orchestrator.contracts.artifact_registry import kinds
from orchestrator.contracts.registry import Registry
from orchestrator.jobs.interface import JobContext, Prepare

Draft = Callable[[JobContext], dict[str, Any]]
F = TypeVar("F", bound=Callable[..., Any])

DRAFTS: Registry[Draft] = Registry("draft function", kinds)
PREPARES: Registry[Prepare] = Registry("prepare function", kinds)
Record = Callable[[JobContext, dict[str, Any], int], None]
RECORDS: Registry[Record] = Registry("record function", kinds)


def drafts(kind: str) -> Callable[[F], F]:
    def register(draft: F) -> F:
        DRAFTS.add(kind, draft)
        return draft

    return register


def prepares(kind: str) -> Callable[[F], F]:
    def register(prepare: F) -> F:
        PREPARES.add(kind, prepare)
        return prepare

    return register


def records(kind: str) -> Callable[[F], F]:
    def register(record: F) -> F:
        RECORDS.add(kind, record)
        return record

    return register
