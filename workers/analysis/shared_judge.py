"""One `RequirementJudge` per process for one job's inputs: the batches of an evidence
analysis that a worker takes, and the draft in the job's own process, load the passages
and the catalogue's ranks (most of a batch's work) once, not once each. Keyed by the job
and the basis read: other inputs, another judge."""

from __future__ import annotations

import json
import threading

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.jobs.interface import JobContext
from workers.analysis.judged_ahead import canonical
from workers.analysis.requirement_evidence import RequirementJudge
from workers.basis import Basis

_judges: dict[tuple[str, str], RequirementJudge] = {}
_lock = threading.Lock()


def judge_for(context: JobContext, catalog: LoadedCatalog, basis: Basis) -> RequirementJudge:
    """The judge of this job from these inputs (`basis`, as the caller read it)."""
    key = (context.request.job_id, json.dumps(canonical(basis)))
    with _lock:  # two batches of one job in one process: the second waits for the first's
        if key not in _judges:
            _judges.clear()  # one job's at a time: a judge holds the passages' vectors
            _judges[key] = RequirementJudge(context, catalog)
        return _judges[key]
