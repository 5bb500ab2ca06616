"""The sweeps `celery beat` runs: each keeps runs moving or visibly blocked.

One module per sweep; every effect is guarded (SKIP LOCKED, guarded UPDATEs, unique
markers) so two sweeps at once produce it once, and each reads only what is due.
"""

from orchestrator.sweeps.approval_waits import sweep_approval_waits
from orchestrator.sweeps.inbox import rekick_pending_runs
from orchestrator.sweeps.lost_jobs import recover_lost_jobs
from orchestrator.sweeps.outbox import publish_stale_outbox
from orchestrator.sweeps.sla import sweep_sla
from orchestrator.sweeps.stale import sweep_stale

__all__ = [
    "publish_stale_outbox",
    "recover_lost_jobs",
    "rekick_pending_runs",
    "sweep_approval_waits",
    "sweep_sla",
    "sweep_stale",
]
