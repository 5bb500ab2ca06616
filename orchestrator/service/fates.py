"""Waiting briefly for a recorded signal's fate (the API's `?wait=`, the CLI's `--wait`)."""

from __future__ import annotations

import time

from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import SignalFate
from orchestrator.service.producer import get_run
from orchestrator.service.queries import get_signal
from orchestrator.service.read_models import SignalReceipt


def await_fate(
    actor: Actor, receipt: SignalReceipt, wait_s: float, max_pause_s: float = 0.25
) -> SignalReceipt:
    """Poll the inbox until the coordinator decides the signal or the wait runs out."""
    if wait_s <= 0 or receipt.fate is not SignalFate.PENDING:
        return receipt
    deadline = time.monotonic() + wait_s
    pause = 0.02
    signal = get_signal(actor, receipt.run.id, receipt.signal_id)
    while signal.fate is SignalFate.PENDING and time.monotonic() < deadline:
        time.sleep(min(pause, max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, max_pause_s)
        signal = get_signal(actor, receipt.run.id, receipt.signal_id)
    return SignalReceipt(
        signal_id=receipt.signal_id,
        fate=signal.fate,
        reason=signal.reason,
        duplicate=receipt.duplicate,
        run=get_run(actor, receipt.run.id),
    )
