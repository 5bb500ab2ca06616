"""Which effects outside the database a decision asks for.

- A new draft of a kind the run's definition publishes is published (drafted by a job or
  amended by a reviewer).
- A version that is rejected or superseded, and a run that is cancelled, has what it
  published undone: each effect kind declares its compensating effect (the engine looks
  up what actually went out and undoes exactly that, once).
"""

from __future__ import annotations

from collections.abc import Sequence

from orchestrator.contracts.statuses import WorkflowStatus
from orchestrator.lifecycle import definitions
from orchestrator.lifecycle.effects import ArtifactStatusChanged, Compensate, Effect, PublishDraft
from orchestrator.lifecycle.state import RunState

#: Artifact statuses whose version no longer stands.
UNDONE_STATUSES = frozenset({"rejected", "superseded"})


def outside_effects(before: RunState, after: RunState, effects: Sequence[Effect]) -> list[Effect]:
    undone = [
        effect
        for effect in effects
        if isinstance(effect, ArtifactStatusChanged) and effect.status in UNDONE_STATUSES
    ]
    asked: list[Effect] = [Compensate(e.status, e.kind, e.version) for e in undone]
    # A version superseded by the very decision that made it (an amended report, which is
    # drafted again at once) is never published.
    gone = {(e.kind, e.version) for e in undone}
    if after.status is WorkflowStatus.CANCELLED and before.status is not WorkflowStatus.CANCELLED:
        asked.append(Compensate("cancelled"))
    if definitions.unavailable(after) is None:
        for kind in sorted(definitions.of(after).publishes):
            version = after.artifacts.get(kind)
            if version is None or version == before.artifacts.get(kind):
                continue
            if (kind, version) not in gone:
                asked.append(PublishDraft(kind, version))
    return asked
