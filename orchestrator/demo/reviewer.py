"""A scripted reviewer: answers each wait the way a person would, through the producer.

Used by the demo, the integration tests and the benchmarks. It records a real approval
event for the exact artifact version waiting, then sends the approval signal naming it.
Its actor needs an approver role granted first (orchestrator.roles.grant_role): the
event carries the roles the actor holds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.service.amendments import ROWS, amend_artifact
from orchestrator.service.approval_events import record_approval
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.queries import get_artifact, list_artifacts
from orchestrator.service.read_models import RunView

_SIGNAL_FOR_KIND = {kind: signal for signal, kind in APPROVAL_SIGNALS.items()}


@dataclass
class ScriptedReviewer:
    actor: Actor
    framework: str = "SOC 2"
    say: Callable[[str], None] = lambda _: None
    answered: set[tuple[str, str, int]] = field(default_factory=set)
    #: Drafts `amender` amends (the first row: owner, target date, note) before the
    #: reviewer approves; whoever amends a draft may not also approve it.
    amend: frozenset[ArtifactKind] = frozenset()
    amender: Actor | None = None
    amended: dict[tuple[str, str], int] = field(default_factory=dict)

    def answer(self, run: RunView) -> bool:
        """Answer the run's current wait once; True when something was sent."""
        step = Step(run.current_step) if run.current_step else None
        if run.status == "waiting_for_input" and step is Step.WAIT_FOR_FRAMEWORK_SELECTION:
            return self._select_framework(run)
        if run.status == "waiting_for_approval" and step in APPROVED_AT:
            return self._approve(run, step)
        return False

    def _select_framework(self, run: RunView) -> bool:
        key = (str(run.id), "framework", 0)
        if key in self.answered:
            return False
        self.answered.add(key)
        send_signal(
            self.actor,
            run.id,
            SignalType.FRAMEWORK_SELECTED,
            f"reviewer:{run.id}:framework",
            payload={"framework": self.framework},
        )
        self.say(f"    reviewer selected framework {self.framework}")
        return True

    def _approve(self, run: RunView, step: Step) -> bool:
        kind = APPROVED_AT[step]
        version = int(run.context["artifacts"][kind.value])
        based_on = self.amended.get((str(run.id), kind.value))
        if based_on is not None and version <= based_on:
            return False  # the amended version is not the one waiting yet
        if (
            self.amender is not None
            and kind in self.amend
            and based_on is None
            and self._amend(self.amender, run, kind, version)
        ):
            return True
        key = (str(run.id), kind.value, version)
        if key in self.answered:
            return False
        self.answered.add(key)
        event = record_approval(
            self.actor, run.id, kind.value, version, comment=f"{kind.value} v{version} reviewed"
        )
        send_signal(
            self.actor,
            run.id,
            _SIGNAL_FOR_KIND[kind],
            f"reviewer:{run.id}:{kind.value}:{version}",
            approval_event_id=event.id,
        )
        self.say(f"    reviewer approved {kind.value} v{version}")
        return True

    def _amend(self, amender: Actor, run: RunView, kind: ArtifactKind, version: int) -> bool:
        """Set an owner, a target date and a note on the draft's first row; the run then
        waits for approval of the amended version."""
        listed = [a for a in list_artifacts(amender, run.id, kind.value) if a.version == version]
        if not listed or kind not in ROWS:
            return False
        rows_field, key = ROWS[kind]
        rows = get_artifact(amender, run.id, listed[0].id).content.get(rows_field) or []
        if not rows:
            return False
        row = str(rows[0][key])
        target = (utcnow() + timedelta(days=90)).date().isoformat()
        receipt = amend_artifact(
            amender,
            run.id,
            listed[0].id,
            [
                {
                    "row": row,
                    "changes": {
                        "owner": "Head of Security",
                        "target_date": target,
                        "note": "owner and date agreed in the review meeting",
                    },
                }
            ],
            reason="assign an owner and a target date",
            idempotency_key=f"reviewer:{run.id}:{kind.value}:{version}:amend",
        )
        self.amended[(str(run.id), kind.value)] = version
        self.say(
            f"    {amender.actor_id} amended {kind.value} row {row} (owner, target date): "
            f"v{receipt.based_on} -> v{receipt.version}"
        )
        return True


def drive(
    reviewer: ScriptedReviewer,
    run_id: uuid.UUID,
    timeout_s: float = 120.0,
    on_change: Callable[[RunView], None] | None = None,
) -> RunView:
    """Follow a run, answering its waits, until it completes, fails, blocks or is cancelled."""
    deadline = time.monotonic() + timeout_s
    last: tuple[str, str | None] | None = None
    while time.monotonic() < deadline:
        run = get_run(reviewer.actor, run_id)
        if on_change is not None and (run.status, run.current_step) != last:
            on_change(run)
        last = (run.status, run.current_step)
        if run.status in _STOPPED:
            return run
        if not reviewer.answer(run):
            time.sleep(0.01)  # a reviewer polling the run's page, not a race fix
    raise TimeoutError(f"run {run_id} still {last} after {timeout_s} s")


_STOPPED = frozenset({"completed", "cancelled", "failed", "blocked"})
