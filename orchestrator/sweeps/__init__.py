"""The sweeps `celery beat` runs: each keeps runs moving or visibly blocked.

One module per sweep, each declared in orchestrator.config.sweep_registry; every effect
is guarded (SKIP LOCKED, guarded UPDATEs, unique markers) so two sweeps at once produce it
once, and each reads only what is due.
"""

from orchestrator.service.review_claims import release_lapsed_claims
from orchestrator.sweeps.approval_waits import sweep_approval_waits
from orchestrator.sweeps.evidence_expiry import sweep_evidence_expiry
from orchestrator.sweeps.lost_jobs import recover_lost_jobs
from orchestrator.sweeps.missing_messages import resend_missing_messages
from orchestrator.sweeps.overdue_requests import sweep_overdue_requests
from orchestrator.sweeps.pending_signals import rekick_pending_runs
from orchestrator.sweeps.sla import sweep_sla
from orchestrator.sweeps.stale import sweep_stale
from orchestrator.sweeps.unpublished_outbox import publish_stale_outbox

__all__ = [
    "publish_stale_outbox",
    "recover_lost_jobs",
    "release_lapsed_claims",
    "resend_missing_messages",
    "rekick_pending_runs",
    "sweep_approval_waits",
    "sweep_evidence_expiry",
    "sweep_overdue_requests",
    "sweep_sla",
    "sweep_stale",
]
