"""Reviewer amendments: a person changes rows of a draft before approving it.

The change is written as the artifact's next version (the rows changed, who, when and
why kept in its `amendments` list, with each row's values before and after) together
with an `artifact_amended` signal, in one transaction; the run then waits for approvals
of that version, and later drafts read it as the latest.
"""

from __future__ import annotations

import copy
import json
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, insert, select

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    SignalRejected,
)
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.signals import ArtifactKind, SignalFate, SignalType
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.session import transaction
from orchestrator.db.storage import sha256_hex
from orchestrator.db.tables import ARTIFACTS
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import insert_signal
from orchestrator.engine.precheck import reject_if_invalid
from orchestrator.service.producer import load_run, signal_envelope

#: Where each amendable draft keeps its rows, and the field that names a row.
ROWS: dict[ArtifactKind, tuple[str, str]] = {
    ArtifactKind.SOA: ("requirements", "requirement_id"),
    ArtifactKind.GAP_ANALYSIS: ("gaps", "control_id"),
    ArtifactKind.MATURITY_ASSESSMENT: ("controls", "control_id"),
    ArtifactKind.POAM: ("items", "id"),
}
ASSESSED = ("implemented", "partially_implemented", "not_implemented", "not_applicable")
#: Fields that take an assessed status: the SoA's row calls it implementation_status.
STATUS_FIELDS = ("assessed_status", "implementation_status")
#: A gap finding's audit fields: what its reviewer decides (carried into the POA&M).
SEVERITIES = ("high", "medium", "low")
FINDING_TEXT = ("cause", "effect", "recommendation")
AMENDABLE = frozenset(
    {
        *STATUS_FIELDS,
        "applicable",
        "justification",
        "owner",
        "target_date",
        "note",
        "severity",
        *FINDING_TEXT,
    }
)
TEXT_LIMIT = 2000


@dataclass(frozen=True)
class AmendmentReceipt:
    artifact_id: uuid.UUID
    artifact_kind: ArtifactKind
    version: int
    based_on: int
    signal_id: uuid.UUID
    duplicate: bool


def _text(field: str, value: Any) -> str:
    if not isinstance(value, str) or len(value) > TEXT_LIMIT:
        raise InvalidInput(f"{field} must be text of at most {TEXT_LIMIT} characters")
    return value.strip()


def row_names(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Each row by the name a reviewer gives it: its key, or "<framework> <key>" (the only
    name of a row whose key another selected framework also uses)."""
    counts = Counter(str(row.get(key)) for row in rows)
    names: dict[str, dict[str, Any]] = {}
    for row in rows:
        plain = str(row.get(key))
        if row.get("framework"):
            names[f"{row['framework']} {plain}"] = row
        if counts[plain] == 1:
            names[plain] = row
    return names


def row_name(rows: list[dict[str, Any]], key: str, row: dict[str, Any]) -> str:
    """The shortest name that finds `row` among `rows`."""
    plain = str(row.get(key))
    unique = sum(1 for other in rows if str(other.get(key)) == plain) == 1
    return plain if unique or not row.get("framework") else f"{row['framework']} {plain}"


def _field(field: str, value: Any) -> Any:
    if field in STATUS_FIELDS:
        if value not in ASSESSED:
            raise InvalidInput(f"{field} must be one of {', '.join(ASSESSED)}")
        return value
    if field == "severity":
        if value not in SEVERITIES:
            raise InvalidInput(f"severity must be one of {', '.join(SEVERITIES)}")
        return value
    if field == "applicable":
        if not isinstance(value, bool):
            raise InvalidInput("applicable must be true or false")
        return value
    if field == "target_date":
        try:
            return date.fromisoformat(str(value)).isoformat()
        except ValueError as error:
            raise InvalidInput("target_date must be a date, YYYY-MM-DD") from error
    return _text(field, value)


def clean_changes(changes: dict[str, Any], current: dict[str, Any]) -> dict[str, Any]:
    """The allowed fields of one row's change, validated; refuses anything else."""
    unknown = sorted(set(changes) - AMENDABLE)
    if unknown:
        raise InvalidInput(
            f"cannot amend {', '.join(unknown)}; amendable: {', '.join(sorted(AMENDABLE))}"
        )
    if not changes:
        raise InvalidInput("an amended row must change at least one field")
    out = {field: _field(field, value) for field, value in changes.items()}
    merged = {**current, **out}
    excluded = merged.get("applicable") is False or any(
        merged.get(status) == "not_applicable" for status in STATUS_FIELDS
    )
    if excluded and ("justification" not in out or not out["justification"]):
        raise InvalidInput("a row marked not applicable needs a justification")
    return out


def amended_content(
    content: dict[str, Any],
    kind: ArtifactKind,
    rows: list[dict[str, Any]],
    *,
    actor_id: str,
    reason: str,
    based_on: int,
) -> dict[str, Any]:
    """The next version's content: the rows changed and the amendment recorded."""
    list_name, key = ROWS[kind]
    result = copy.deepcopy(content)
    listed = result.get(list_name, [])
    by_key = row_names(listed, key)
    changed: list[dict[str, Any]] = []
    for entry in rows:
        row_key = str(entry.get("row", ""))
        row = by_key.get(row_key)
        if row is None:
            raise InvalidInput(
                f"{kind.value} has no row {row_key!r} (rows are named by their {key})"
            )
        changes = entry.get("changes")
        if not isinstance(changes, dict):
            raise InvalidInput(f"row {row_key!r}: changes must be an object")
        cleaned = clean_changes(changes, row)
        changed.append(
            {
                "row": row_name(listed, key, row),
                "before": {f: row.get(f) for f in cleaned},
                "after": cleaned,
            }
        )
        row.update(cleaned)
        row["amended"] = True
    result.setdefault("amendments", []).append(
        {
            "version": based_on + 1,
            "based_on": based_on,
            "by": actor_id,
            "at": utcnow().isoformat(),
            "reason": reason,
            "rows": changed,
        }
    )
    summary = dict(result.get("summary", {}))
    summary["amended_rows"] = len({r["row"] for a in result["amendments"] for r in a["rows"]})
    result["summary"] = summary
    return result


@retry_busy
def amend_artifact(
    actor: Actor,
    run_id: uuid.UUID,
    artifact_id: uuid.UUID,
    rows: list[dict[str, Any]],
    *,
    reason: str,
    idempotency_key: str,
    kick: Kick = fleet.kick,
) -> AmendmentReceipt:
    """Amend the draft `artifact_id` (the version the reviewer read) into its next version."""
    if not reason or not reason.strip():
        raise InvalidInput("an amendment needs a reason")
    if not rows:
        raise InvalidInput("an amendment changes at least one row")
    with transaction() as session:
        run = load_run(session, actor, run_id)
        based = session.get(Artifact, artifact_id)
        if based is None or based.run_id != run.id:
            raise NotFound(f"run {run_id} has no artifact {artifact_id}")
        kind = ArtifactKind(based.kind)
        if kind not in ROWS:
            raise InvalidInput(
                f"{kind.value} has no rows a reviewer can amend; amendable: "
                f"{', '.join(k.value for k in ROWS)}"
            )
        # The signal names the request itself, so a replay with the same key is a duplicate.
        payload = {
            "artifact_kind": kind.value,
            "based_on": based.version,
            "version": based.version + 1,
            "reason": reason.strip(),
            "rows": [str(r.get("row", "")) for r in rows],
            "request_sha256": sha256_hex(json.dumps(rows, sort_keys=True, default=str).encode()),
        }
        envelope = signal_envelope(
            run, actor.actor_id, SignalType.ARTIFACT_AMENDED, idempotency_key, run.trace_id, payload
        )
        recorded = insert_signal(session, envelope)
        if recorded.conflict:
            raise IdempotencyConflict(
                recorded.reason or "idempotency conflict", signal_id=str(recorded.signal_id)
            )
        if recorded.duplicate:
            existing = session.scalar(
                select(Artifact).where(
                    Artifact.run_id == run.id,
                    Artifact.kind == kind.value,
                    Artifact.created_by_job_id == f"amendment:{recorded.signal_id}",
                )
            )
            if existing is None:
                raise SignalRejected(
                    recorded.reason or "this amendment was refused",
                    signal_id=str(recorded.signal_id),
                )
            return AmendmentReceipt(
                existing.id, kind, existing.version, based.version, recorded.signal_id, True
            )
        latest = session.scalar(
            select(func.max(Artifact.version)).where(
                Artifact.run_id == run.id, Artifact.kind == kind.value
            )
        )
        if based.status == "approved" or latest != based.version:
            raise InvalidInput(
                f"{kind.value} version {based.version} is no longer an open "
                f"draft (current version {latest}, status {based.status})"
            )
        content = amended_content(
            based.content,
            kind,
            rows,
            actor_id=actor.actor_id,
            reason=reason.strip(),
            based_on=based.version,
        )
        version = based.version + 1
        new_id = uuid.uuid4()
        session.execute(
            insert(ARTIFACTS),
            {
                "id": new_id,
                "tenant_id": run.tenant_id,
                "assessment_id": run.assessment_id,
                "run_id": run.id,
                "kind": kind.value,
                "version": version,
                "status": "draft",
                "content": content,
                "media_type": "application/json",
                "storage_path": None,
                "sha256": sha256_hex(json.dumps(content, sort_keys=True, default=str).encode()),
                "created_by_job_id": f"amendment:{recorded.signal_id}",
                "created_at": utcnow(),
            },
        )
        recorded = reject_if_invalid(session, run, envelope, recorded)
        if recorded.fate is SignalFate.REJECTED:
            # Nothing of the amendment may stay: the transaction is rolled back.
            raise SignalRejected(
                recorded.reason or "amendment refused", signal_id=str(recorded.signal_id)
            )
    kick(run_id)
    return AmendmentReceipt(new_id, kind, version, version - 1, recorded.signal_id, False)
