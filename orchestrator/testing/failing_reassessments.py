"""Fault injection: a reassessment's evaluation raises while a mark file exists.

A worker started with `--include orchestrator.testing.failing_reassessments` and
LIFECYCLE_FAIL_REASSESSMENTS_MARK=<file> fails every reassessment it evaluates while that
file exists, as a job meeting a broken dependency does; remove the file and the next
evaluation (a retry) runs as usual.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from orchestrator.db.continuous_models import Reassessment
from orchestrator.jobs.interface import JobContext
from workers.analysis import reassessment

log = logging.getLogger(__name__)
MARK = Path(os.environ.get("LIFECYCLE_FAIL_REASSESSMENTS_MARK", "fail-reassessments.mark"))
_evaluate = reassessment._evaluate


class InjectedFault(RuntimeError):
    """The failure this hook injects."""


def _failing(context: JobContext, found: Reassessment, started: float) -> None:
    if MARK.exists():
        log.warning("failing a reassessment for fault injection")
        raise InjectedFault(f"fault injected while {MARK.name} exists")
    _evaluate(context, found, started)


reassessment._evaluate = _failing
