"""What the demo says while a step works through its batches: done of all, and when the
rest should be done at the pace so far. On a terminal a progress bar for each such step
(rich's); to a file or a pipe, plain lines."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING

from orchestrator.contracts.identity import Actor
from orchestrator.service.progress import batch_progress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

Seen = tuple[tuple[str, int, int], ...]

#: The bars' time left is the pace over everything seen of the step so far (rich's
#: default, the last 30 s, would know no pace when a batch takes longer than that).
PACE_OVER_S = 24 * 3600.0


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
        self._said: dict[str, tuple[int, int]] = {}  # step: (done, total) last said

    def __call__(self, seen: object) -> None:
        assert isinstance(seen, tuple)
        for step, done, total in seen:
            # Another job's change is no news of this one: each count is said once.
            if self._said.get(step) == (done, total):
                continue
            self._said[step] = (done, total)
            now = self._clock()
            since, done_then = self._first.setdefault(step, (now, done))
            if done >= total or done == done_then:
                if done >= total and total:
                    self._say(f"    {step}: {done} of {total} batches done")
                continue
            rate = (done - done_then) / max(now - since, 1e-6)
            left = (total - done) / rate
            self._say(f"    {step}: {done} of {total} batches done, about {left:.0f} s left")


class ProgressBars:
    """A bar for each job that fans out: its batches done of all and the time left at the
    pace so far (the time it took, once done). The bars are drawn while some job has
    batches to do and stay on screen when all are done; lines the demo prints meanwhile
    go to the same console, above them.

    `auto_refresh` redraws them ten times a second (the time left counts down between
    batches); without it they are drawn when a batch is done, which is what a test wants.
    """

    def __init__(
        self, console: Console, clock: Callable[[], float], *, auto_refresh: bool = True
    ) -> None:
        self._console = console
        self._clock = clock
        self._auto_refresh = auto_refresh
        self._progress: Progress | None = None
        self._tasks: dict[tuple[str, int], TaskID] = {}
        self._drawn: dict[tuple[str, int], tuple[int, int]] = {}  # job: (done, total)

    def __call__(self, seen: object) -> None:
        assert isinstance(seen, tuple)
        times: dict[str, int] = {}
        for step, done, total in seen:
            # A step run again (reprocessed) is a second job of that name: its own bar.
            times[step] = times.get(step, 0) + 1
            job = (step, times[step])
            if not total or self._drawn.get(job) == (done, total):
                continue
            self._drawn[job] = (done, total)
            progress = self._started()
            task = self._tasks.get(job)
            if task is None:
                # Shown from its first numbers on, which are where its pace starts.
                task = self._tasks[job] = progress.add_task(step, total=total, visible=False)
            progress.update(
                task,
                total=total,
                completed=done,
                visible=True,
                label="took" if done >= total else "time left",
            )
        if self._progress is not None:
            self._progress.refresh()
            if self._progress.finished:
                self.close()

    def close(self) -> None:
        """Leave the bars as they are drawn now; a later job's bars start below them."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
            self._tasks.clear()

    def _started(self) -> Progress:
        if self._progress is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeRemainingColumn,
            )

            self._progress = Progress(
                TextColumn("    {task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("batches,"),
                TextColumn("{task.fields[label]}", markup=False),
                TimeRemainingColumn(elapsed_when_finished=True),
                console=self._console,
                get_time=self._clock,
                auto_refresh=self._auto_refresh,
                speed_estimate_period=PACE_OVER_S,
                redirect_stderr=False,  # stderr stays where it was sent
            )
            self._progress.start()
        return self._progress
