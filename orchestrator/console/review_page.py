"""Everything a review page shows, gathered in one place: the version read and its
neighbours, its tables one page each, its pictures, what changed since the previous
version (with the discussion of that version), what is still undecided, who may decide
and who claimed the review."""

from __future__ import annotations

import threading
import uuid
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from orchestrator.console import charts, draft_pages
from orchestrator.console.charts import Chart
from orchestrator.console.draft_diff import VersionDiff, diff
from orchestrator.console.draft_pages import TablePage
from orchestrator.console.draft_tables import specs_of, summary
from orchestrator.contracts.errors import NotFound
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.lifecycle.state import RunState
from orchestrator.service.apikeys import Principal, Scope
from orchestrator.service.approval_rights import ReviewRight, review_right, state_of_view
from orchestrator.service.draft_rows import rows_of
from orchestrator.service.producer import get_run
from orchestrator.service.queries import get_artifact, list_approvals, list_artifacts
from orchestrator.service.read_models import ApprovalRecordView, ArtifactView, RunView
from orchestrator.service.readiness import Readiness, artifact_readiness, readiness
from orchestrator.service.reassessments import ReassessmentView, reassessment_of, row_key
from orchestrator.service.review_claims import ClaimView, claim_on
from orchestrator.service.review_comments import CommentView, list_comments
from orchestrator.service.row_decisions import decision_lines

APPROVABLE = frozenset(APPROVAL_SIGNALS.values())


@dataclass
class Review:
    run: RunView
    kind: ArtifactKind
    artifact: ArtifactView
    versions: list[ArtifactView]
    content: dict[str, Any]
    previous: ArtifactView | None
    changes: VersionDiff | None
    pages: list[TablePage]
    charts: list[Chart]
    summary: list[tuple[str, Any]]
    readiness: Readiness | None
    right: ReviewRight | None
    """Set when this version waits for a decision."""
    claim: ClaimView | None
    claimable: bool
    comments: list[CommentView]
    approvals: list[ApprovalRecordView]
    amendable: bool
    reassessment: ReassessmentView | None = None
    """Set on a reassessed SoA version that asks approval of its changed rows."""
    decisions: list[str] | None = None
    """How people decided the rows' statuses: one by one, and each action on many rows."""

    def changed_row(self, row: dict[str, Any]) -> dict[str, Any] | None:
        """The reassessment's entry of a changed SoA row: its name there ("<framework>
        <requirement>"), its hash (what an approval names) and who approved it, if anyone."""
        if self.reassessment is None:
            return None
        name = row_key(row)
        return next((c for c in self.reassessment.changed_rows if c["row"] == name), None)

    @property
    def draft_comments(self) -> list[CommentView]:
        """The thread on the draft as a whole, every version, oldest first."""
        return [c for c in self.comments if c.row is None]

    def row_comments(self, name: str) -> list[CommentView]:
        return [c for c in self.comments if c.row == name]

    @property
    def decided_page(self) -> TablePage | None:
        return next((p for p in self.pages if p.spec.decided), None)


def choose(
    versions: list[ArtifactView], version: int | None, run_id: uuid.UUID, kind: ArtifactKind
) -> ArtifactView:
    if not versions:
        raise NotFound(f"run {run_id} has no {kind.value} draft yet")
    chosen = (
        versions[-1]
        if version is None
        else next((v for v in versions if v.version == version), None)
    )
    if chosen is None:
        raise NotFound(f"run {run_id} has no {kind.value} version {version}")
    return chosen


def open_for_decision(state: RunState, kind: ArtifactKind, version: int) -> bool:
    """This version of `kind` waits for decisions: current, not sent back, not approved."""
    return (
        kind in APPROVABLE
        and state.artifacts.get(kind) == version
        and state.rejected.get(kind) != version
        and not state.is_approved(kind)
        and not state.status.is_terminal
    )


#: How many versions' contents the pages keep parsed (a draft and the one before it, for a
#: few reviewers at once): a 1,090-row SoA is megabytes of JSON, read and parsed anew on
#: every request before.
CACHED_VERSIONS = 6
_contents: OrderedDict[tuple[uuid.UUID, str], dict[str, Any]] = OrderedDict()
_contents_lock = threading.Lock()


def content_of(actor: Actor, run_id: uuid.UUID, version: ArtifactView) -> dict[str, Any]:
    """The content of `version` (listed for `actor` on `run_id`), parsed once per process:
    a version is never rewritten (an amendment writes the next one), so its id and hash
    name its content. Shared by the requests that read it: pages only read it."""
    key = (version.id, version.sha256)
    with _contents_lock:
        found = _contents.get(key)
        if found is not None:
            _contents.move_to_end(key)
            return found
    content = get_artifact(actor, run_id, version.id).content
    with _contents_lock:
        _contents[key] = content
        while len(_contents) > CACHED_VERSIONS:
            _contents.popitem(last=False)
    return content


def load_review(
    principal: Principal,
    run_id: uuid.UUID,
    kind: ArtifactKind,
    version: int | None,
    params: Mapping[str, str],
) -> Review:
    actor = principal.actor
    run = get_run(actor, run_id)
    versions = list_artifacts(actor, run_id, kind.value)
    chosen = choose(versions, version, run_id, kind)
    content = content_of(actor, run_id, chosen)
    previous = next((v for v in reversed(versions) if v.version < chosen.version), None)
    comments = list_comments(actor, run_id, kind)
    changes = None
    if previous is not None:
        before = content_of(actor, run_id, previous)
        changes = diff(kind, before, content, version=chosen.version, comments=comments)
    state = state_of_view(run)
    waiting = open_for_decision(state, kind, chosen.version)
    return Review(
        run=run,
        kind=kind,
        artifact=chosen,
        versions=versions,
        content=content,
        previous=previous,
        changes=changes,
        pages=[
            draft_pages.table_page(kind, spec, content, draft_pages.read_query(spec, params))
            for spec in specs_of(kind)
        ],
        charts=charts.charts(kind, content),
        summary=summary(content),
        decisions=decision_lines(content),
        readiness=_readiness(actor, run_id, chosen.id, kind, chosen.version, content, state),
        right=review_right(principal, run, kind, chosen.id) if waiting else None,
        claim=claim_on(actor, run_id, kind) if waiting else None,
        claimable=waiting and _waits_at(state, kind),
        comments=comments,
        approvals=[a for a in list_approvals(actor, run_id) if a.artifact_kind == kind.value],
        amendable=rows_of(kind) is not None
        and principal.allows(Scope.APPROVE)
        and chosen.version == versions[-1].version
        and chosen.status == "draft"
        and not state.status.is_terminal,
        reassessment=reassessment_of(actor, chosen.id)
        if kind is ArtifactKind.SOA and chosen.status != "approved"
        else None,
    )


def _readiness(
    actor: Actor,
    run_id: uuid.UUID,
    artifact_id: uuid.UUID,
    kind: ArtifactKind,
    version: int,
    content: dict[str, Any],
    state: RunState,
) -> Readiness | None:
    """What the gate would refuse, from the content in hand; an SoA's basis is read
    against the register (a transaction of its own, for that gate only)."""
    if kind not in APPROVABLE:
        return None
    if kind is ArtifactKind.SOA:
        return artifact_readiness(actor, run_id, artifact_id)
    return readiness(kind, version, content, state.policy(kind))


def _waits_at(state: RunState, kind: ArtifactKind) -> bool:
    return state.step is not None and APPROVED_AT.get(state.step) is kind
