"""Which text embedder jobs use (LIFECYCLE_EMBEDDER), and on how many threads."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class EmbeddingSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_", env_file=".env", extra="ignore")

    embedder: str = Field(
        "minilm",
        description="minilm: all-MiniLM-L6-v2 in numpy, weights from an installed "
        "package (default); hashing: no model; sentence-transformers: "
        "the same model through PyTorch (the `embeddings` extra).",
    )
    model_threads: int = Field(
        1,
        ge=1,
        le=256,
        description="Threads the embedding model runs on in each process (ONNX Runtime's; "
        "idle ones sleep, never spin). One suits a fleet of a job process per core and the "
        "embedded default (which embeds the catalogue on a thread per core); a fleet with "
        "fewer job processes than cores sets cores / processes (on 2 cores, one job "
        "process with 2: a whole assessment 1.3-1.5x faster, the same vectors).",
    )
