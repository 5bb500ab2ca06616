"""Sweep configuration (prefix LIFECYCLE_SWEEP_): every duration has a sensible default.

Durations are seconds. Maps are JSON in the environment, for example
LIFECYCLE_SWEEP_APPROVAL_POLICIES='{"wait_for_report_approval": {"remind_after_s": 3600,
"escalate_after_s": 14400, "block_after_s": 86400}}'.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from orchestrator.config.sweep_registry import by_name
from orchestrator.contracts.jobs import JOBS, JobKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind

HOUR = 3600.0
DAY = 24 * HOUR


class ApprovalTiming(BaseModel):
    """How long an approval may wait before a reminder, an escalation, and a block."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    remind_after_s: float = Field(gt=0)
    escalate_after_s: float = Field(gt=0)
    block_after_s: float = Field(gt=0)

    @model_validator(mode="after")
    def _in_order(self) -> ApprovalTiming:
        if not self.remind_after_s <= self.escalate_after_s <= self.block_after_s:
            raise ValueError("need remind_after_s <= escalate_after_s <= block_after_s")
        return self


#: Seconds a job may go without an outcome or a heartbeat once started, as each kind
#: declares (orchestrator.contracts.jobs.JOBS): above its hard time limit.
DEFAULT_JOB_DEADLINES: dict[JobKind, float] = {job.kind: job.deadline_s for job in JOBS}


class SweepSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_SWEEP_", env_file=".env", extra="ignore"
    )

    grace_s: float = Field(
        10, ge=0, description="Younger outbox rows and signals are left to whoever wrote them."
    )
    batch: int = Field(500, ge=1, le=10_000, description="Most items one sweep handles.")
    interval_s: float | None = Field(None, gt=0, description="Run every sweep this often (tests).")
    intervals: dict[str, float] = Field(
        default_factory=dict,
        description="Seconds between two runs of a sweep, by its name "
        '(e.g. {"stale": 3600}); the others keep their defaults.',
    )
    rekick_backoff_max_s: float = Field(600, gt=0)
    approval_default: ApprovalTiming = ApprovalTiming(
        remind_after_s=DAY, escalate_after_s=3 * DAY, block_after_s=7 * DAY
    )
    approval_policies: dict[Step, ApprovalTiming] = Field(default_factory=dict)
    sla_s: float = Field(30 * DAY, gt=0, description="A run should complete within this.")
    stale_after_s: float = Field(14 * DAY, gt=0, description="Idle this long: stale.")
    evidence_request_escalate_days: int = Field(
        7, ge=0, description="Escalate an evidence request overdue this many days."
    )
    evidence_remind_days: int = Field(
        30, ge=0, description="Remind a document's owner this many days before it expires."
    )
    job_deadline_s: dict[JobKind, float] = Field(default_factory=dict)
    queued_deadline_s: float = Field(
        HOUR,
        gt=0,
        description="A queued job not started within this is taken for lost (a lost message).",
    )
    redispatch_limit: int = Field(3, ge=0)
    message_check_batch: int = Field(
        2000,
        ge=1,
        le=50_000,
        description="Most queued jobs whose messages one check looks for in the broker.",
    )
    job_lease_s: float = Field(
        60,
        gt=0,
        description="A started job whose heartbeats stop for this long is taken for lost "
        "(its worker died, hung or was cut off) and re-dispatched, and a claimed batch of a "
        "job that fans out is taken over; several heartbeat intervals "
        "(LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S).",
    )

    @field_validator("approval_policies")
    @classmethod
    def _only_approval_waits(cls, value: dict[Step, ApprovalTiming]) -> dict[Step, ApprovalTiming]:
        from orchestrator.lifecycle.definition import STEP_SPECS

        wrong = [s.value for s in value if STEP_SPECS[s].kind is not StepKind.WAIT_FOR_APPROVAL]
        if wrong:
            raise ValueError(f"not approval waits: {', '.join(wrong)}")
        return value

    def gate(self, step: Step) -> ApprovalTiming:
        return self.approval_policies.get(step, self.approval_default)

    def job_deadline(self, kind: JobKind) -> timedelta:
        seconds = self.job_deadline_s.get(kind, DEFAULT_JOB_DEADLINES[kind])
        return timedelta(seconds=seconds)

    @field_validator("intervals")
    @classmethod
    def _known_sweeps(cls, value: dict[str, float]) -> dict[str, float]:
        known = by_name()
        unknown = sorted(set(value) - set(known))
        if unknown:
            raise ValueError(f"no sweep named {', '.join(unknown)}; sweeps: {', '.join(known)}")
        if any(seconds <= 0 for seconds in value.values()):
            raise ValueError("a sweep's interval is a positive number of seconds")
        return value

    def interval(self, sweep: str) -> float:
        return self.interval_s or self.intervals.get(sweep) or by_name()[sweep].interval_s

    @property
    def grace(self) -> timedelta:
        return timedelta(seconds=self.grace_s)
