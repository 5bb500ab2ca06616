"""Fair sharing: one tenant's backlog does not hold everyone else's jobs up.

Before a job is claimed, its tenant's running jobs on its queue are counted; at the
tenant's limit (LIFECYCLE_TENANT_JOB_LIMIT, per tenant LIFECYCLE_TENANT_JOB_LIMITS) the
message goes back to the end of its queue, unclaimed, so the jobs of other tenants queued
behind it run first: the queue's order interleaves tenants. The job's row stays queued and
its message exists throughout (nothing for the sweeps to resend). Two deliveries of one
tenant admitted at the same instant may each see room for one: the limit can be passed by
the number of workers admitting at that instant, never more.

Where the broker keeps no priorities (RabbitMQ), a delivered message of a tenant's backlog
gives way to another tenant's first job queued behind it the same way: back to the end of
its queue, at once (orchestrator.engine.tenant_order).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime

from sqlalchemy import func, select
from sqlalchemy.exc import OperationalError

from orchestrator.config.settings import get_settings
from orchestrator.contracts.jobs import JobRequest
from orchestrator.db.models import Job, WorkflowRun
from orchestrator.db.session import read_transaction
from orchestrator.engine import tenant_order
from orchestrator.engine.messages import send_job
from orchestrator.engine.routing import ROUTES
from orchestrator.engine.tenant_order import Level, priority

log = logging.getLogger(__name__)


def running_for_tenant(tenant_id: str, queue: str) -> int:
    with read_transaction() as session:
        return int(
            session.scalar(
                select(func.count())
                .select_from(Job)
                .join(WorkflowRun, WorkflowRun.id == Job.run_id)
                .where(
                    WorkflowRun.tenant_id == tenant_id,
                    Job.queue == queue,
                    Job.status == "started",
                )
            )
            or 0
        )


def admitted(request: JobRequest) -> bool:
    """May this job start now, given its tenant's jobs running on its queue?"""
    limit = get_settings().tenants.limit_for(request.tenant_id)
    if limit <= 0:
        return True
    try:
        running = running_for_tenant(request.tenant_id, ROUTES[request.kind].queue)
    except OperationalError:  # the database is away: the job's own claim waits it out
        log.warning("could not count the running jobs of %s", request.tenant_id, exc_info=True)
        return True
    return running < limit


def gives_way(tenant_id: str, queue: str, job_id: str | None, sent_at: object) -> bool:
    """Does this message, sent at `sent_at` (epoch seconds, its publish header), give way
    to another tenant's first job on its queue? Only on a broker that keeps no priorities,
    only if it is its tenant's backlog (a job with another of its tenant queued there; a
    batch, `job_id` None, always is), only to a job queued after it was sent, and only
    once it has waited LIFECYCLE_TENANT_GIVE_WAY_AFTER_S (what waited less held no one up
    for long, and costs no read: every job on RabbitMQ comes this way)."""
    if not isinstance(sent_at, int | float) or not tenant_order.kept_at_delivery():
        return False
    if time.time() - sent_at < get_settings().tenants.give_way_after_s:
        return False
    try:
        with read_transaction() as session:
            if job_id is not None:
                level = tenant_order.job_level(session, tenant_id, queue, job_id)
                if level is Level.FIRST:
                    return False
            return tenant_order.first_behind(
                session, tenant_id, queue, datetime.fromtimestamp(sent_at, UTC)
            )
    except OperationalError:  # the database is away: the order is a courtesy, not a rule
        log.warning("could not read the tenant order of %s", queue, exc_info=True)
        return False


def send_to_back(request: JobRequest, body: dict[str, object], pause: bool = True) -> None:
    """Put the job's message at the end of its queue (after a short pause, so a queue only
    this tenant fills is not spun through, unless it gives way to a job waiting behind it);
    its row stays queued."""
    if pause:
        time.sleep(get_settings().tenants.defer_s)
    route = ROUTES[request.kind]
    # At its limit the tenant has work running on this queue: the job is its backlog.
    send_job(route.task_name, route.queue, request.job_id, dict(body), priority(Level.BACKLOG))
    why = "its tenant's share of" if pause else "another tenant's first job on"
    log.info("job %s waits for %s %s", request.job_id, why, route.queue)
