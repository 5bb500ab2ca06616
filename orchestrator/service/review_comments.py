"""Comments on a draft: a thread per draft and per row, kept with the version they were
written on, audited, and read back with the diff of the next version (what was discussed
before the change).

A comment names the artifact kind, the version the person read, and optionally a row (as
amendments name rows). Comments are never edited or deleted.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import select

from orchestrator.contracts.audit import AuditEventType
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.text import require_nul_free
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.review_models import ReviewComment
from orchestrator.db.session import read_transaction, transaction
from orchestrator.jobs.artifacts import find_artifact
from orchestrator.service.draft_rows import row_names, rows_of
from orchestrator.service.producer import load_run
from orchestrator.service.review_audit import audit_review

COMMENT_LIMIT = 4000
EXCERPT = 200


@dataclass(frozen=True)
class CommentView:
    id: int
    kind: ArtifactKind
    version: int
    row: str | None
    author: str
    body: str
    created_at: datetime


def _view(row: ReviewComment) -> CommentView:
    created = row.created_at
    return CommentView(
        id=row.id,
        kind=ArtifactKind(row.artifact_kind),
        version=row.artifact_version,
        row=row.row_name,
        author=row.author,
        body=row.body,
        created_at=created if created.tzinfo is not None else created.replace(tzinfo=UTC),
    )


@retry_busy
def add_comment(
    actor: Actor,
    run_id: uuid.UUID,
    kind: ArtifactKind,
    version: int,
    body: str,
    *,
    row: str | None = None,
) -> CommentView:
    """A comment on version `version` of the run's `kind` draft, or on one of its rows."""
    text = (body or "").strip()
    if not text or len(text) > COMMENT_LIMIT:
        raise InvalidInput(f"a comment is text of 1 to {COMMENT_LIMIT} characters")
    require_nul_free(comment=text, row=row)
    with transaction() as session:
        run = load_run(session, actor, run_id)
        artifact = find_artifact(session, run.id, kind, version)
        if artifact is None:
            raise NotFound(f"run {run_id} has no {kind.value} version {version}")
        if row is not None:
            stored = session.get(Artifact, artifact.artifact_id)
            _check_row(kind, stored.content if stored is not None else {}, row)
        comment = ReviewComment(
            tenant_id=run.tenant_id,
            run_id=run.id,
            artifact_kind=kind.value,
            artifact_version=version,
            row_name=row,
            author=actor.actor_id,
            body=text,
            created_at=utcnow(),
        )
        session.add(comment)
        session.flush()
        audit_review(
            session,
            run,
            AuditEventType.LIFECYCLE_WORKFLOW_REVIEW_COMMENTED,
            actor.actor_id,
            {
                "artifact_kind": kind.value,
                "version": version,
                "row": row,
                "comment_id": comment.id,
                "excerpt": text[:EXCERPT],
            },
        )
        return _view(comment)


def _check_row(kind: ArtifactKind, content: dict[str, Any], row: str) -> None:
    rows_at = rows_of(kind)
    if rows_at is None:
        raise InvalidInput(f"{kind.value} has no rows to comment on; comment on the draft")
    list_name, key = rows_at
    listed = content.get(list_name)
    rows = [r for r in listed if isinstance(r, dict)] if isinstance(listed, list) else []
    if row not in row_names(rows, key):
        raise InvalidInput(f"{kind.value} has no row {row!r} (rows are named by their {key})")


@retry_busy
def list_comments(actor: Actor, run_id: uuid.UUID, kind: ArtifactKind) -> list[CommentView]:
    """Every comment on the run's `kind` drafts, oldest first, all versions."""
    with read_transaction() as session:
        run = load_run(session, actor, run_id)
        rows = session.scalars(
            select(ReviewComment)
            .where(ReviewComment.run_id == run.id, ReviewComment.artifact_kind == kind.value)
            .order_by(ReviewComment.id)
        ).all()
        return [_view(r) for r in rows]
