"""An evidence analysis's judgements computed by analysis workers ahead of the draft
(`workers.analysis.evidence_batches`), kept in storage per batch together with the basis
they were read from. The draft takes a batch's judgements only when that basis is its own
(the same artifacts, approvals, chunks and vectors) and judges the rest itself."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orchestrator.config.settings import get_settings
from orchestrator.db.batch_models import JobBatch
from orchestrator.db.storage import content_path, put_at
from orchestrator.jobs.interface import JobContext
from workers.basis import Basis

Key = tuple[str, ...]
"""The SCF control ids judged together: one applicable control, or a requirement's links."""
Judgement = dict[str, Any]


def kept_path(storage_dir: Path, job_id: str, items: list[str]) -> Path:
    digest = hashlib.sha256(json.dumps([job_id, items]).encode()).hexdigest()
    return content_path(storage_dir / "judgements", digest, ".json")


def canonical(basis: Basis) -> Any:
    """The basis as it reads back from JSON, so that two can be compared."""
    return json.loads(json.dumps(basis, default=str))


def keep(path: Path, basis: Basis, judgements: dict[Key, Judgement]) -> None:
    body = {"basis": canonical(basis), "judgements": [[list(k), v] for k, v in judgements.items()]}
    put_at(path, json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def judged_ahead(context: JobContext, basis: Basis) -> dict[Key, Judgement]:
    """The judgements this job's finished batches kept from `basis`, the draft's inputs."""
    request = context.request
    done = list(
        context.session.scalars(
            select(JobBatch.items).where(
                JobBatch.job_id == request.job_id, JobBatch.status == "succeeded"
            )
        )
    )
    if not done:
        return {}
    read = canonical(basis)
    storage = get_settings().resolved_storage_dir  # where the batches kept them
    found: dict[Key, Judgement] = {}
    for items in done:
        try:
            body = json.loads(kept_path(storage, request.job_id, items["ids"]).read_bytes())
        except (OSError, ValueError):
            continue  # gone or unreadable: judged again by the draft
        if isinstance(body, dict) and body.get("basis") == read:
            found.update((tuple(key), value) for key, value in body.get("judgements", []))
    return found
