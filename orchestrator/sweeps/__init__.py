"""The sweeps `celery beat` runs: each keeps runs moving or visibly blocked.

One module per sweep; every effect is guarded (SKIP LOCKED, guarded UPDATEs, unique
markers) so two sweeps at once produce it once, and each reads only what is due.
"""

from collections.abc import Callable
from typing import Any

from orchestrator.sweeps.approval_waits import sweep_approval_waits
from orchestrator.sweeps.lost_jobs import recover_lost_jobs
from orchestrator.sweeps.missing_messages import resend_missing_messages
from orchestrator.sweeps.pending_signals import rekick_pending_runs
from orchestrator.sweeps.sla import sweep_sla
from orchestrator.sweeps.stale import sweep_stale
from orchestrator.sweeps.unpublished_outbox import publish_stale_outbox

#: Every run sweep by its name in the sweep settings (beat_schedule.py uses the same names).
SWEEPS: dict[str, Callable[[], Any]] = {
    "messages": resend_missing_messages,
    "outbox": publish_stale_outbox,
    "inbox": rekick_pending_runs,
    "lost_jobs": recover_lost_jobs,
    "approval_waits": sweep_approval_waits,
    "sla": sweep_sla,
    "stale": sweep_stale,
}

__all__ = [
    "SWEEPS",
    "publish_stale_outbox",
    "recover_lost_jobs",
    "resend_missing_messages",
    "rekick_pending_runs",
    "sweep_approval_waits",
    "sweep_sla",
    "sweep_stale",
]
