"""Which text embedder jobs use (LIFECYCLE_EMBEDDER)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class EmbeddingSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LIFECYCLE_", env_file=".env", extra="ignore")

    embedder: str = Field(
        "hashing", description="hashing: no model (default); minilm: the optional "
                               "sentence-embedding model (the `embeddings` extra).")
