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

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import APPROVAL_SIGNALS, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.service.approval_events import record_approval
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.read_models import RunView

_SIGNAL_FOR_KIND = {kind: signal for signal, kind in APPROVAL_SIGNALS.items()}


@dataclass
class ScriptedReviewer:
    actor: Actor
    framework: str = "SOC 2"
    say: Callable[[str], None] = lambda _: None
    answered: set[tuple[str, str, int]] = field(default_factory=set)

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
