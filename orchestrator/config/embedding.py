"""Which text embedder jobs use (LIFECYCLE_EMBEDDER)."""

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
