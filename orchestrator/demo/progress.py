"""What the demo says while a step works through its batches: done of all, and when the
rest should be done at the pace so far."""

from __future__ import annotations

import uuid
from collections.abc import Callable

from orchestrator.contracts.identity import Actor
from orchestrator.service.progress import batch_progress

Seen = tuple[tuple[str, int, int], ...]


def batches_seen(actor: Actor) -> Callable[[uuid.UUID], Seen]:
    """(step, done, total) of each of the run's jobs that fan out."""

    def seen(run_id: uuid.UUID) -> Seen:
        return tuple((p.step, p.done, p.total) for p in batch_progress(actor, run_id))

    return seen


class ProgressLines:
    """One line per change of a job's batches, with an estimate of the time left."""

    def __init__(self, say: Callable[[str], None], clock: Callable[[], float]) -> None:
        self._say = say
        self._clock = clock
        self._first: dict[str, tuple[float, int]] = {}  # step: (when first seen, done then)

    def __call__(self, seen: object) -> None:
        assert isinstance(seen, tuple)
        for step, done, total in seen:
            now = self._clock()
            since, done_then = self._first.setdefault(step, (now, done))
            if done >= total or done == done_then:
                if done >= total and total:
                    self._say(f"    {step}: {done} of {total} batches done")
                continue
            rate = (done - done_then) / max(now - since, 1e-6)
            left = (total - done) / rate
            self._say(f"    {step}: {done} of {total} batches done, about {left:.0f} s left")
