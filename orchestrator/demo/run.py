"""The main job on the embedded default: one assessment through all 20 steps.

A reviewer is simulated: whenever the run waits, it selects a framework or records an
approval event for the exact artifact version waiting and sends the approval signal.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import select

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact, StepExecution
from orchestrator.db.session import transaction
from orchestrator.demo.progress import ProgressLines, batches_seen
from orchestrator.demo.reviewer import ScriptedReviewer, drive
from orchestrator.demo.roster import DEMO_ROSTER
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.service.roles import grant_role
from orchestrator.service.roster import add_person

SAMPLES = Path(__file__).parent / "samples"
OWNER = Actor(tenant_id="demo-tenant", actor_id="user:owner@example.org")
REVIEWER = Actor(tenant_id="demo-tenant", actor_id="user:reviewer@example.org")
DEMO_ADMIN = "user:admin@example.org"
#: SOC 2's Security category is always in scope; the demo also chooses these two.
DEMO_CATEGORIES = {"SOC 2": ["availability", "confidentiality"]}


@dataclass
class DemoResult:
    run: RunView
    steps: list[tuple[str, float]] = field(default_factory=list)
    report_path: str | None = None
    seconds: float = 0.0


def run_demo(
    say: Callable[[str], None] = print,
    framework: str = "SOC 2",
    stall_s: float = 300.0,
    on_progress: Callable[[object], None] | None = None,
) -> DemoResult:
    """One whole assessment. Given up only when the run went `stall_s` without a step
    finishing or a batch of work done (`RunStalled`): a busy machine is slow, not stuck.
    `on_progress` is told each change of the batches done (by default a line each,
    through `say`)."""
    began = time.monotonic()
    assessment = create_assessment(OWNER, "example-org", "Example Corp annual SCF assessment")
    say(f"assessment {assessment.id} created")
    for person in DEMO_ROSTER:  # drafts propose these people as owners
        add_person(OWNER, assessment.id, person)
        say(f"  roster: {person.name} ({', '.join(person.roles).replace('_', ' ')})")
    for path in sorted(SAMPLES.iterdir()):
        upload_document(OWNER, assessment.id, path.name, path.read_bytes())
        say(f"  uploaded {path.name}")
    run = start_lifecycle(OWNER, assessment.id, idempotency_key=f"demo-{assessment.id}")
    # Roles are granted, never claimed: the demo's admin makes the reviewer an assessor.
    grant_role(
        REVIEWER.tenant_id,
        REVIEWER.actor_id,
        "assessor",
        actor_id=DEMO_ADMIN,
        reason="the demo's reviewer",
    )
    say(f"lifecycle run {run.id} started")
    reviewer = ScriptedReviewer(
        REVIEWER,
        framework=framework,
        categories=DEMO_CATEGORIES.get(framework),
        say=say,
        amend=frozenset({ArtifactKind.GAP_ANALYSIS, ArtifactKind.REPORT}),
        amender=OWNER,
    )
    run = drive(
        reviewer,
        run.id,
        on_change=lambda r: say(f"  [{r.status:>20}] {r.current_step or ''}"),
        stall_s=stall_s,
        progress=batches_seen(OWNER),
        on_progress=on_progress if on_progress is not None else ProgressLines(say, time.monotonic),
    )
    result = DemoResult(
        run=run,
        steps=_step_durations(run.id),
        report_path=_report(run.id),
        seconds=time.monotonic() - began,
    )
    for line in draft_summary(run.id):
        say(line)
    return result


def _owner_line(soa: dict[str, Any], gaps: Artifact | None) -> str:
    """How many rows and findings propose a person (not a role) as their owner."""
    rows = soa.get("requirements") or []
    findings = gaps.content.get("gaps", []) if gaps is not None else []

    def people(listed: list[dict[str, Any]]) -> int:
        return sum(1 for r in listed if r.get("proposed_owner_kind") == "person")

    return (
        f"owners: a person proposed on {people(rows)} of {len(rows)} SoA rows and "
        f"{people(findings)} of {len(findings)} gap findings"
    )


def draft_summary(run_id: uuid.UUID) -> list[str]:
    """What the approved drafts say: proposals with their counts, the highest maturity,
    POA&M items and the report's exports (OSCAL among them)."""
    with transaction() as session:
        latest: dict[str, Artifact] = {}
        for artifact in session.scalars(
            select(Artifact).where(Artifact.run_id == run_id).order_by(Artifact.version)
        ):
            latest[artifact.kind] = artifact
    lines = []
    soa = latest.get("soa")
    if soa is not None:
        summary = soa.content.get("summary", {})
        lines.append(
            f"SoA: {summary.get('rows', 0)} requirements ({summary.get('applicable', 0)} "
            f"applicable, {summary.get('not_applicable', 0)} not applicable)"
        )
        lines += [
            f"  {c['framework']} {c['category']}: {c['applicable']} applicable, "
            f"{c['not_applicable']} not applicable"
            for c in summary.get("by_category", [])
        ]
        lines.append(_owner_line(soa.content, latest.get("gap_analysis")))
    evidence = latest.get("evidence_analysis")
    if evidence is not None:
        summary = evidence.content.get("summary", {})
        counts = ", ".join(
            f"{key} {summary.get(key, 0)}"
            for key in (
                "evidence_found",
                "weak_evidence",
                "no_evidence_found",
                "template_not_adopted",
            )
        )
        lines.append(f"evidence: {summary.get('requirements', 0)} requirements ({counts})")
        lines.append(
            f"unfilled template passages set aside, never counted as evidence: "
            f"{summary.get('template_passages_set_aside', 0)}"
        )
    lines += _amendment_lines(session_artifacts(run_id))
    maturity = latest.get("maturity_assessment")
    if maturity is not None:
        highest = maturity.content.get("summary", {}).get("highest_control_level")
        lines.append(f"maturity: highest control level {highest} (policies alone cap it at 2)")
    poam = latest.get("poam")
    if poam is not None:
        items = poam.content.get("items", [])
        lines.append(f"POA&M: {len(items)} items, FedRAMP columns")
        gaps = latest.get("gap_analysis")
        amended = {
            str(r["row"])
            for a in (gaps.content.get("amendments", []) if gaps else [])
            for r in a.get("rows", [])
        }
        lines += [
            f"  {i['id']} ({i['control_id']}): point of contact "
            f"{i['point_of_contact']}, scheduled completion {i['scheduled_completion_date']} "
            "(set on the gap analysis)"
            for i in items
            if str(i.get("control_id")) in amended
        ]
    report = latest.get("report")
    if report is not None:
        kinds = ", ".join(str(e.get("kind")) for e in report.content.get("exports", []))
        lines.append(f"report exports: {kinds}")
    return lines


def session_artifacts(run_id: uuid.UUID) -> list[Artifact]:
    with transaction() as session:
        return list(
            session.scalars(
                select(Artifact)
                .where(Artifact.run_id == run_id)
                .order_by(Artifact.kind, Artifact.version)
            )
        )


def _amendment_lines(artifacts: list[Artifact]) -> list[str]:
    """Each amendment once, on the version it made: who, why, which rows (a bulk one by
    its filters and how many rows each selected)."""
    lines = []
    for artifact in artifacts:
        for amendment in artifact.content.get("amendments", []):
            if amendment.get("version") != artifact.version:
                continue  # carried along in a later version's history
            selections = amendment.get("selections") or []
            rows = (
                "; ".join(f"{_selection(s)}: {s['selected']} rows" for s in selections)
                if selections
                else ", ".join(str(r["row"]) for r in amendment.get("rows", []))
            )
            lines.append(
                f"{artifact.kind} v{amendment['version']} amended by {amendment['by']} "
                f"({amendment['reason']}): {rows}"
            )
    return lines


def _selection(selection: dict[str, object]) -> str:
    chosen = selection.get("filter")
    if isinstance(chosen, dict):
        return ", ".join(f"{k}={v}" for k, v in chosen.items() if k != "undecided")
    return f"rows {selection.get('rows')}"


def _step_durations(run_id: uuid.UUID) -> list[tuple[str, float]]:
    with transaction() as session:
        rows = session.scalars(
            select(StepExecution).where(StepExecution.run_id == run_id).order_by(StepExecution.id)
        )
        return [(row.step, _seconds(row.started_at, row.finished_at)) for row in rows]


def _seconds(start: datetime, end: datetime | None) -> float:
    return (end - start).total_seconds() if end else 0.0


def _report(run_id: uuid.UUID) -> str | None:
    with transaction() as session:
        return session.scalar(
            select(Artifact.storage_path)
            .where(Artifact.run_id == run_id, Artifact.kind == "report")
            .order_by(Artifact.version.desc())
            .limit(1)
        )
