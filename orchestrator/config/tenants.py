"""Fair sharing between tenants (prefix LIFECYCLE_TENANT_): the order tenants' messages are
taken in, and how many of one tenant's jobs may run at once on each queue."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class TenantShareSettings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix="LIFECYCLE_TENANT_", env_file=".env", extra="ignore"
    )

    fair_order: bool = Field(
        True,
        description="A tenant's first message on a queue (nothing else of the tenant waiting "
        "there) is taken before other tenants' backlogs (message priorities on Redis and "
        "RabbitMQ 4 quorum queues; on RabbitMQ, a backlog message also gives way when it is "
        "delivered ahead of another tenant's first job).",
    )
    job_limit: int = Field(
        0,
        ge=0,
        description="Jobs of one tenant running at once on one queue (0: no limit). A job "
        "over it goes to the back of its queue, so other tenants' jobs run first.",
    )
    job_limits: dict[str, int] = Field(
        default_factory=dict,
        description='Per tenant, overriding job_limit (JSON: {"tenant-a": 8}; 0: no limit).',
    )
    defer_s: float = Field(
        1.0,
        ge=0,
        description="How long a worker holds a job over its tenant's limit before putting it "
        "back at the end of its queue (bounds the turns of a queue only one tenant fills).",
    )

    give_way_after_s: float = Field(
        1.0,
        ge=0,
        description="On RabbitMQ, how long a backlog message must have waited in its queue "
        "before its worker looks for another tenant's first job queued behind it (a message "
        "that waited less had little ahead of it: no read for it).",
    )

    def limit_for(self, tenant_id: str) -> int:
        return self.job_limits.get(tenant_id, self.job_limit)
