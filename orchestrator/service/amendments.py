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
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.errors import (
    IdempotencyConflict,
    InvalidInput,
    NotFound,
    SignalRejected,
)
from orchestrator.contracts.identity import Actor, Kick
from orchestrator.contracts.ids import new_id
from orchestrator.contracts.signals import ArtifactKind, SignalFate, SignalType
from orchestrator.db.busy import retry_busy
from orchestrator.db.models import Artifact
from orchestrator.db.session import transaction
from orchestrator.db.storage import sha256_hex
from orchestrator.db.tables import ARTIFACTS
from orchestrator.engine import messages as fleet
from orchestrator.engine.inbox import Recorded, insert_signal
from orchestrator.engine.precheck import reject_if_invalid
from orchestrator.service.draft_rows import (
    amendable_kinds,
    names_of,
    row_names,
    rows_in,
    rows_of,
)
from orchestrator.service.producer import RunRecord, load_run, signal_envelope
from orchestrator.service.review_claims import refuse_unless_holder
from orchestrator.service.row_filter import matching_rows

ASSESSED = ("implemented", "partially_implemented", "not_implemented", "not_applicable")
#: Fields that take an assessed status: the SoA's row calls it implementation_status.
STATUS_FIELDS = ("assessed_status", "implementation_status")
#: A gap finding's audit fields: what its reviewer decides (carried into the POA&M).
SEVERITIES = ("high", "medium", "low")
FINDING_TEXT = ("cause", "effect", "recommendation")
#: A reviewer's "not a gap" on a finding, with the reason; only a gap finding takes them.
NOT_A_GAP = ("not_a_gap", "not_a_gap_reason")
#: Set with "not a gap": the evidence (document ids) the finding rested on when decided,
#: so a later draft whose evidence changed asks again (workers.analysis.dismissals).
NOT_A_GAP_BASIS = "not_a_gap_basis"
#: Set by a later draft whose evidence changed since; deciding again clears it.
NOT_A_GAP_REVIEW = "not_a_gap_review"
AMENDABLE = frozenset(
    {
        *STATUS_FIELDS,
        "applicable",
        "justification",
        "legal_basis",
        "owner",
        "target_date",
        "note",
        "severity",
        *FINDING_TEXT,
        *NOT_A_GAP,
    }
)
#: The report's one amendable row, `assessor`: the statement reviewers write on it.
REPORT_STATEMENT = frozenset({"conclusion", "scope_boundary", "period_start", "period_end", "note"})
DATES = frozenset({"target_date", "period_start", "period_end"})
TEXT_LIMIT = 2000
#: How an amendment entry names its rows: one row, a list of rows, or a filter.
SELECTORS = ("row", "rows", "filter")


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


def _field(field: str, value: Any) -> Any:
    if field in STATUS_FIELDS:
        if value not in ASSESSED:
            raise InvalidInput(f"{field} must be one of {', '.join(ASSESSED)}")
        return value
    if field == "severity":
        if value not in SEVERITIES:
            raise InvalidInput(f"severity must be one of {', '.join(SEVERITIES)}")
        return value
    if field in ("applicable", "not_a_gap"):
        if not isinstance(value, bool):
            raise InvalidInput(f"{field} must be true or false")
        return value
    if field in DATES:
        try:
            return date.fromisoformat(str(value)).isoformat()
        except ValueError as error:
            raise InvalidInput(f"{field} must be a date, YYYY-MM-DD") from error
    return _text(field, value)


def clean_changes(
    changes: dict[str, Any], current: dict[str, Any], allowed: frozenset[str] = AMENDABLE
) -> dict[str, Any]:
    """The allowed fields of one row's change, validated; refuses anything else."""
    unknown = sorted(set(changes) - allowed)
    if unknown:
        raise InvalidInput(
            f"cannot amend {', '.join(unknown)}; amendable: {', '.join(sorted(allowed))}"
        )
    if not changes:
        raise InvalidInput("an amended row must change at least one field")
    out = {field: _field(field, value) for field, value in changes.items()}
    problem = (
        _applicability_problem(out, current)
        or _period_problem({**current, **out})
        or _not_a_gap_problem({**current, **out})
    )
    if problem is not None:
        raise InvalidInput(problem)
    return out


def _period_problem(row: dict[str, Any]) -> str | None:
    start, end = row.get("period_start"), row.get("period_end")
    if start and end and str(end) < str(start):
        return f"the period ends ({end}) before it starts ({start})"
    return None


def _not_a_gap_problem(row: dict[str, Any]) -> str | None:
    if row.get("not_a_gap") is True and not str(row.get("not_a_gap_reason") or "").strip():
        return "marking a finding not a gap needs a reason (not_a_gap_reason)"
    return None


def _applicability_problem(out: dict[str, Any], current: dict[str, Any]) -> str | None:
    """A row made not applicable (or applicable again) needs the person's justification;
    a row that stays not applicable takes no other assessed status."""
    marks_excluded = out.get("applicable") is False or any(
        out.get(status) == "not_applicable" for status in STATUS_FIELDS
    )
    flips = "applicable" in out and out["applicable"] != current.get("applicable", True)
    changes_applicability = (marks_excluded and current.get("applicable") is not False) or flips
    if changes_applicability and not out.get("justification"):
        return "a change of applicability (or a row marked not applicable) needs a justification"
    stays_excluded = {**current, **out}.get("applicable") is False
    assessed = [out[s] for s in STATUS_FIELDS if out.get(s) not in (None, "not_applicable")]
    if stays_excluded and assessed:
        return (
            f"the row is not applicable ({current.get('justification') or 'excluded'}); "
            "set applicable to true with a justification to assess it"
        )
    return None


def amended_content(
    content: dict[str, Any],
    kind: str,
    rows: list[dict[str, Any]],
    *,
    actor_id: str,
    reason: str,
    based_on: int,
) -> dict[str, Any]:
    """The next version's content: the rows changed and the amendment recorded.

    Each entry names its rows with one of `row` (a name), `rows` (names) or `filter`
    (`orchestrator.service.row_filter`, applied to the version the reviewer read), and
    gives the `changes` to make on each; a row several entries name takes them all, in
    order."""
    list_name, key = rows_in(kind)
    result = copy.deepcopy(content)
    listed = result.get(list_name, [])
    merged: dict[str, dict[str, Any]] = {}
    selections: list[dict[str, Any]] = []
    for entry in rows:
        changes = entry.get("changes")
        targets = _targets(kind, content, entry)
        if not isinstance(changes, dict):
            raise InvalidInput(f"rows {', '.join(targets[:3])}: changes must be an object")
        for name in targets:
            merged.setdefault(name, {}).update(changes)
        if "row" not in entry:
            picked = {k: entry[k] for k in ("rows", "filter") if k in entry}
            # The names selected: which rows this one action decided (orchestrator.service.
            # row_decisions tells them from rows named one by one).
            selections.append(
                picked | {"selected": len(targets), "names": targets, "changes": changes}
            )
    by_name = row_names(listed, key)
    changed: list[dict[str, Any]] = []
    for name, changes in merged.items():
        row = by_name[name]
        cleaned = _cleaned(kind, name, changes, row)
        changed.append({"row": name, "before": {f: row.get(f) for f in cleaned}, "after": cleaned})
        row.update(cleaned)
        row["amended"] = True
    amendment = {
        "version": based_on + 1,
        "based_on": based_on,
        "by": actor_id,
        "at": utcnow().isoformat(),
        "reason": reason,
        "rows": changed,
    }
    if selections:
        amendment["selections"] = selections
    result.setdefault("amendments", []).append(amendment)
    summary = dict(result.get("summary", {}))
    summary["amended_rows"] = len({r["row"] for a in result["amendments"] for r in a["rows"]})
    result["summary"] = summary
    return result


def _targets(kind: str, content: dict[str, Any], entry: dict[str, Any]) -> list[str]:
    """The names (shortest form) of the rows one entry selects in the version read."""
    list_name, key = rows_in(kind)
    listed = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    given = [k for k in SELECTORS if k in entry]
    if len(given) != 1:
        raise InvalidInput("each entry names its rows with exactly one of: row, rows, filter")
    shortest = {id(r): n for r, n in zip(listed, names_of(listed, key), strict=True)}
    if given[0] == "filter":
        found = matching_rows(kind, content, entry["filter"])
        if not found:
            shown = json.dumps(entry["filter"], sort_keys=True)
            raise InvalidInput(f"the filter {shown} selects no row of this {kind}")
        return [shortest[id(row)] for row in found]
    names = [entry["row"]] if given[0] == "row" else entry["rows"]
    if not isinstance(names, list) or not names:
        raise InvalidInput("rows must be a non-empty list of row names")
    by_name = row_names(listed, key)
    missing = [str(n) for n in names if str(n) not in by_name]
    if missing:
        raise InvalidInput(
            f"{kind} has no row {', '.join(repr(m) for m in missing[:10])} "
            f"(rows are named by their {key})"
        )
    return list(dict.fromkeys(shortest[id(by_name[str(n)])] for n in names))


def _cleaned(kind: str, name: str, changes: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    allowed = REPORT_STATEMENT if kind is ArtifactKind.REPORT else AMENDABLE
    if kind != ArtifactKind.GAP_ANALYSIS:
        allowed = allowed - set(NOT_A_GAP)
    try:
        cleaned = clean_changes(changes, row, allowed)
    except InvalidInput as error:
        raise InvalidInput(f"row {name}: {error.message}") from error
    if cleaned.get("not_a_gap") is True:
        cleaned[NOT_A_GAP_BASIS] = dict(row.get("evidence_basis") or {})
        cleaned[NOT_A_GAP_REVIEW] = None
    return cleaned


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
    """Amend the draft `artifact_id` (the version the reviewer read) into its next version.

    Recorded as an `artifact_amended` signal in the run's inbox, like any signal: a replay
    with the same key answers the same receipt, a different request under it conflicts,
    and an amendment the lifecycle refuses leaves nothing behind."""
    if not reason or not reason.strip():
        raise InvalidInput("an amendment needs a reason")
    if not rows:
        raise InvalidInput("an amendment changes at least one row")
    with transaction() as session:
        run, based, kind = _amendable(session, actor, run_id, artifact_id)
        refuse_unless_holder(session, run.id, kind, actor.actor_id)
        content = amended_content(
            based.content,
            kind,
            rows,
            actor_id=actor.actor_id,
            reason=reason.strip(),
            based_on=based.version,
        )
        envelope = signal_envelope(
            run,
            actor.actor_id,
            SignalType.ARTIFACT_AMENDED,
            idempotency_key,
            run.trace_id,
            _payload(kind, based.version, reason.strip(), rows, content),
        )
        recorded = insert_signal(session, envelope)
        if recorded.conflict:
            raise IdempotencyConflict(
                recorded.reason or "idempotency conflict", signal_id=str(recorded.signal_id)
            )
        if recorded.duplicate:
            return _replayed(session, run.id, kind, based.version, recorded)
        _still_open(session, run.id, kind, based)
        new_id = _insert_version(session, run, kind, based.version + 1, content, recorded)
        recorded = reject_if_invalid(session, run, envelope, recorded)
        if recorded.fate is SignalFate.REJECTED:
            # Nothing of the amendment may stay: the transaction is rolled back.
            raise SignalRejected(
                recorded.reason or "amendment refused", signal_id=str(recorded.signal_id)
            )
    kick(run_id)
    version = based.version + 1
    return AmendmentReceipt(new_id, kind, version, version - 1, recorded.signal_id, False)


def _amendable(
    session: Session, actor: Actor, run_id: uuid.UUID, artifact_id: uuid.UUID
) -> tuple[RunRecord, Artifact, ArtifactKind]:
    run = load_run(session, actor, run_id)
    based = session.get(Artifact, artifact_id)
    if based is None or based.run_id != run.id:
        raise NotFound(f"run {run_id} has no artifact {artifact_id}")
    kind = ArtifactKind(based.kind)
    if rows_of(kind) is None:
        raise InvalidInput(
            f"{kind.value} has no rows a reviewer can amend; amendable: "
            f"{', '.join(amendable_kinds())}"
        )
    return run, based, kind


def _payload(
    kind: ArtifactKind,
    based_on: int,
    reason: str,
    rows: list[dict[str, Any]],
    content: dict[str, Any],
) -> dict[str, Any]:
    # The signal names the request itself, so a replay with the same key is a duplicate.
    return {
        "artifact_kind": kind.value,
        "based_on": based_on,
        "version": based_on + 1,
        "reason": reason,
        "rows": [str(r["row"]) for r in content["amendments"][-1]["rows"]],
        "request_sha256": sha256_hex(json.dumps(rows, sort_keys=True, default=str).encode()),
    }


def _replayed(
    session: Session,
    run_id: uuid.UUID,
    kind: ArtifactKind,
    based_on: int,
    recorded: Recorded,
) -> AmendmentReceipt:
    """The receipt of the amendment this key recorded before (refused: its reason)."""
    existing = session.scalar(
        select(Artifact).where(
            Artifact.run_id == run_id,
            Artifact.kind == kind.value,
            Artifact.created_by_job_id == f"amendment:{recorded.signal_id}",
        )
    )
    if existing is None:
        raise SignalRejected(
            recorded.reason or "this amendment was refused", signal_id=str(recorded.signal_id)
        )
    return AmendmentReceipt(existing.id, kind, existing.version, based_on, recorded.signal_id, True)


def _still_open(session: Session, run_id: uuid.UUID, kind: ArtifactKind, based: Artifact) -> None:
    latest = session.scalar(
        select(func.max(Artifact.version)).where(
            Artifact.run_id == run_id, Artifact.kind == kind.value
        )
    )
    if based.status == "approved" or latest != based.version:
        raise InvalidInput(
            f"{kind.value} version {based.version} is no longer an open "
            f"draft (current version {latest}, status {based.status})"
        )


def _insert_version(
    session: Session,
    run: RunRecord,
    kind: ArtifactKind,
    version: int,
    content: dict[str, Any],
    recorded: Recorded,
) -> uuid.UUID:
    artifact_id = new_id()
    session.execute(
        insert(ARTIFACTS),
        {
            "id": artifact_id,
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
    return artifact_id
