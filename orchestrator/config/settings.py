"""The one settings object: the fleet's own fields (prefix LIFECYCLE_) and one section per
part (api, sweeps, webhooks, observability, ingestion, embedding, console, oidc,
effects, tenants, outbound), each with its own prefix.

Read once per process (`get_settings()`); `reset_settings()` forgets it after the
environment changed (tests).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from urllib.parse import urlsplit

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from orchestrator.config.api import ApiSettings
from orchestrator.config.console import ConsoleSettings
from orchestrator.config.effects import EffectSettings
from orchestrator.config.embedding import EmbeddingSettings
from orchestrator.config.ingestion import IngestionLimits
from orchestrator.config.observability import ObservabilitySettings
from orchestrator.config.oidc import OidcSettings
from orchestrator.config.outbound import OutboundSettings
from orchestrator.config.placeholders import is_placeholder
from orchestrator.config.sweeps import SweepSettings
from orchestrator.config.tenants import TenantShareSettings
from orchestrator.config.webhooks import WebhookSettings

DEFAULT_HOME = Path(".lifecycle")


class Settings(BaseSettings):
    """With no settings at all: a SQLite file and an in-memory broker under `.lifecycle/`."""

    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_", env_file=".env", extra="ignore")

    home: Path = Field(DEFAULT_HOME, description="Where the embedded database and files live.")
    database_url: str | None = Field(None, description="SQLAlchemy URL; default: SQLite file.")
    broker_url: str = Field(
        "memory://localhost/",
        description="Celery broker: redis://, or amqp:// for RabbitMQ (quorum queues, "
        "publisher confirms; orchestrator.engine.broker_topology).",
    )
    storage_dir: Path | None = Field(None, description="Documents and artifacts; default: home.")
    allow_placeholder_passwords: bool = Field(
        False,
        description="Development only: start although the database or broker URL carries a "
        "placeholder password (`change-me…`, as in .env.example); refused otherwise.",
    )
    visibility_timeout_s: int = Field(
        4 * 3600, ge=1, description="Redis redelivery delay; > longest job."
    )
    unacked_restore_interval_s: int = Field(
        10, ge=1, description="How often Redis gives back messages of workers that died."
    )
    job_max_retries: int = Field(
        3,
        ge=0,
        description="Retries of a retryable job error, with exponential backoff and full jitter.",
    )
    job_retry_backoff_s: int = Field(
        2, ge=0, description="Cap of the first wait before a retry (the wait is drawn below it)."
    )
    job_retry_backoff_max_s: int = Field(
        30, ge=0, description="Cap of the longest wait between retries."
    )
    job_database_retries: int = Field(
        20,
        ge=0,
        description="Retries of a job while the database is unavailable (about "
        "9 minutes with the default backoff): an outage is not the job's "
        "fault, so it gets more than job_max_retries.",
    )
    job_batch_attempts: int = Field(
        3, ge=1, description="Tries of one batch before its job fails (and is retried)."
    )
    job_batch_items: int = Field(
        32,
        ge=1,
        le=4096,
        description="Items in one batch of a job that fans out (chunks to embed): small "
        "enough that each worker of the queue takes several, so the last batch taken does "
        "not keep one worker busy while the others idle (a job with few chunks cuts smaller "
        "batches, at least 8).",
    )
    job_batch_controls: int = Field(
        32,
        ge=1,
        le=4096,
        description="How many controls' worth of the catalogue's control texts one batch "
        "embeds (about four texts a control; the texts are cut longest first, so a batch "
        "holds texts of about one length), when an analysis job finds them missing from the "
        "vectors kept under the storage directory and those shipped with the package (the "
        "shipped SCF release's, for the shipped model): the first assessment on another "
        "catalogue version or model (a minute for SCF with the model on one core) spreads "
        "over the analysis workers.",
    )
    job_batch_documents: int = Field(
        4,
        ge=1,
        le=1024,
        description="Documents in one batch of an ingestion job that fans out (each checked "
        "and parsed by whichever ingestion worker takes the batch): a few, so that a large "
        "upload spreads over every ingestion worker and one slow file holds up only its batch.",
    )
    job_batch_requirements: int = Field(
        512,
        ge=1,
        le=8192,
        description="Judgements in one batch of an evidence analysis that fans out (an "
        "applicable control, or a requirement's linked controls, each judged against the "
        "knowledge base by whichever analysis worker takes the batch). Each worker that "
        "takes one first ranks the passages against the whole catalogue, about as long as "
        "judging a few hundred: one framework's scope stays in one batch, several "
        "frameworks' spread.",
    )
    worker_blas_threads: int = Field(
        1,
        ge=1,
        le=256,
        description="Threads of numpy's BLAS (the matrix products of rankings) in each "
        "worker process; the embedding model always runs in one. The fleet scales by "
        "processes, one per core: OpenBLAS's own threads then spin against the other "
        "processes (on 2 cores with its default of 2, an evidence analysis's judging took "
        "five times as long).",
    )
    worker_preload: bool = Field(
        True,
        description="A worker of a job queue loads the shipped SCF catalogue and the embedding "
        "model before it takes work (before the prefork pool forks, so its children share "
        "them), instead of in its first job.",
    )
    database_idle_transaction_timeout_s: int = Field(
        1200,
        ge=0,
        description="PostgreSQL ends a session idle this long inside a transaction "
        "(0: never), freeing its locks: a hung job's row lock would "
        "hide it from the lost-job sweep. Above any pause between two "
        "statements of a job; the default is the longest job deadline.",
    )
    database_dead_peer_s: int = Field(
        60,
        ge=0,
        description="A PostgreSQL connection whose other end stays silent this long is "
        "given up, on both sides (TCP keepalives and a TCP user timeout; 0: the OS "
        "defaults, hours): the server ends the session of a worker cut off the network and "
        "frees its locks, and that worker gets an error instead of waiting for ever.",
    )
    job_heartbeat_interval_s: float = Field(
        10,
        gt=0,
        description="How often a worker process renews the lease of each job it runs; "
        "below LIFECYCLE_SWEEP_JOB_LEASE_S (the lease runs from the job's claim).",
    )
    database_busy_timeout_s: float = Field(
        30.0,
        gt=0,
        description="How long a person's read or write waits out a busy SQLite database "
        "(the one write lock held elsewhere) before it is answered as busy (503), "
        "retried after jittered, doubling waits within that time; also SQLite's own busy timeout.",
    )
    max_document_bytes: int = Field(25 * 1024 * 1024, ge=1, description="Upload size limit.")
    embedding_dim: int = Field(
        256, ge=8, le=4096, description="Dimensions of the hashing embedder's vectors."
    )
    inline_coordination: bool = Field(
        True,
        description="A job applies its own outcome after committing it (saves a hop); "
        "false: it wakes the coordinator task instead.",
    )
    oscal_ssp_href: str = Field(
        "",
        description="Where the system's OSCAL SSP is, for the import-ssp of the OSCAL "
        "assessment plan and POA&M; empty or a placeholder (an example address, 'TBD'): "
        "the exports write a marked placeholder, and an export for FedRAMP is refused.",
    )
    oscal_system_id: str = Field(
        "",
        description="The system's FedRAMP-assigned id for the OSCAL POA&M's system-id; "
        "empty or a placeholder (an all-zero id, 'TBD'): the assessment's id, and an "
        "export for FedRAMP is refused.",
    )
    oscal_assessor_name: str = Field(
        "",
        description="The assessing organisation (the 3PAO), a party of the OSCAL assessment "
        "plan; empty: no organisation party.",
    )
    oscal_assessor_iso17020_id: str = Field(
        "",
        description="The assessing organisation's ISO/IEC 17020 accreditation number "
        "(FedRAMP's form NNNN.NN), on its party in the OSCAL assessment plan; empty: none.",
    )
    oscal_assessor_address: str = Field(
        "",
        description="The assessing organisation's address, lines separated by ';': the "
        "location of the OSCAL assessment plan's metadata (FedRAMP asks for one); empty: "
        "no location.",
    )

    # Sections: each reads its own prefix (LIFECYCLE_API_, LIFECYCLE_SWEEP_, ...).
    api: ApiSettings = Field(default_factory=ApiSettings)
    sweeps: SweepSettings = Field(default_factory=SweepSettings)
    webhooks: WebhookSettings = Field(default_factory=WebhookSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)
    ingestion: IngestionLimits = Field(default_factory=IngestionLimits)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    console: ConsoleSettings = Field(default_factory=ConsoleSettings)
    oidc: OidcSettings = Field(default_factory=OidcSettings)
    effects: EffectSettings = Field(default_factory=EffectSettings)
    tenants: TenantShareSettings = Field(default_factory=TenantShareSettings)
    outbound: OutboundSettings = Field(default_factory=OutboundSettings)

    @field_validator("database_url")
    @classmethod
    def _normalise_postgres(cls, value: str | None) -> str | None:
        # Plain postgresql:// URLs mean psycopg 3, the only PostgreSQL driver shipped.
        if value and value.startswith(("postgresql://", "postgres://")):
            return "postgresql+psycopg://" + value.split("://", 1)[1]
        return value

    @model_validator(mode="after")
    def _renewed_within_the_lease(self) -> Settings:
        # The lease runs from the claim; its first renewal comes within one interval.
        if self.job_heartbeat_interval_s >= self.sweeps.job_lease_s:
            raise ValueError(
                f"LIFECYCLE_JOB_HEARTBEAT_INTERVAL_S ({self.job_heartbeat_interval_s:g}) must be "
                f"below LIFECYCLE_SWEEP_JOB_LEASE_S ({self.sweeps.job_lease_s:g}): a job's "
                "lease would lapse before its first renewal and every running job be taken "
                "for lost"
            )
        return self

    @model_validator(mode="after")
    def _no_placeholder_passwords(self) -> Settings:
        # The password itself is never echoed: only which URL carries a placeholder.
        if self.allow_placeholder_passwords:
            return self
        for name, url in (("DATABASE", self.database_url), ("BROKER", self.broker_url)):
            password = urlsplit(url).password if url else None
            if password and is_placeholder(password):
                raise ValueError(
                    f"LIFECYCLE_{name}_URL carries a placeholder password: set a real secret "
                    "(or LIFECYCLE_ALLOW_PLACEHOLDER_PASSWORDS=true on a development machine)"
                )
        return self

    @property
    def resolved_database_url(self) -> str:
        return self.database_url or f"sqlite:///{(self.home / 'lifecycle.db').resolve()}"

    @property
    def resolved_storage_dir(self) -> Path:
        return (self.storage_dir or self.home / "storage").resolve()

    @property
    def is_embedded_broker(self) -> bool:
        return self.broker_url.startswith("memory://")

    @property
    def storage_problem(self) -> str | None:
        """Why this process may not share its files with the fleet's other processes: on a
        real broker, a relative home or storage resolves against each one's own directory."""
        configured = self.storage_dir or self.home
        if self.is_embedded_broker or configured.is_absolute():
            return None
        return (
            f"the storage directory {configured} is relative: this process uses "
            f"{self.resolved_storage_dir}, another process started elsewhere would not; "
            "set LIFECYCLE_HOME (or LIFECYCLE_STORAGE_DIR) to one absolute path shared "
            "by every API and worker process"
        )


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


def reset_settings() -> None:
    get_settings.cache_clear()
