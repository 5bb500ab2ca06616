"""Golden histories: real runs, recorded decision by decision, replayed through decide().

A change to the rules that decides a recorded run differently fails here, naming the
first decision that changed, until the histories are regenerated on purpose:

    lifecycle history regenerate tests/golden/histories/*.json

(`python -m tests.golden.record` records the scenario runs again from scratch.)
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from orchestrator.engine.history import first_divergence, regenerate
from orchestrator.lifecycle import definitions, outside

HISTORIES = sorted((Path(__file__).parent / "histories").glob("*.json"))
REGENERATE = "lifecycle history regenerate tests/golden/histories/*.json"


def load(name: str) -> dict[str, Any]:
    return json.loads((Path(__file__).parent / "histories" / f"{name}.json").read_text())


def test_the_histories_cover_what_a_long_lived_run_meets() -> None:
    seen: Counter[str] = Counter()
    for path in HISTORIES:
        history = json.loads(path.read_text())
        for item in history["decisions"]:
            seen[item["signal"]["type"]] += 1
            seen[f"fate:{item['expected']['fate']}"] += 1
            seen.update(effect["effect"] for effect in item["expected"]["effects"])
    for kind in (
        "approval_rejected",
        "artifact_revision_requested",
        "step_reprocess_requested",
        "assessment_cancelled",
        "assessment_blocked",
        "assessment_resumed",
        "job_failed",
        "step_retry_requested",
        "external_effect_stuck",
        "handoff_resolved",
        "fate:ignored",
        "fate:rejected",
        "PublishDraft",
        "Compensate",
    ):
        assert seen[kind] > 0, f"no recorded run has {kind}"


@pytest.mark.parametrize("path", HISTORIES, ids=lambda path: path.stem)
def test_todays_rules_decide_every_recorded_run_as_it_was_decided(path: Path) -> None:
    history = json.loads(path.read_text())
    shipped = definitions.find(history["definition"]["version"])
    assert shipped is not None, f"{path.name} ran on a definition this deployment lacks"
    divergence = first_divergence(history)
    assert divergence is None, (
        f"{path.name}: {divergence}. If the rule change is meant, regenerate the "
        f"expectations and review the diff: {REGENERATE}"
    )


def test_a_rule_change_is_caught_at_the_decision_it_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    history = load("handoff_and_compensation")
    # A rule change: a rejected version keeps what it published outside.
    monkeypatch.setattr(outside, "UNDONE_STATUSES", frozenset({"superseded"}))

    divergence = first_divergence(history)

    assert divergence is not None
    # Caught at the rejection itself, whichever decision of the run that is.
    assert re.match(r"decision \d+ \(approval_rejected\): effect", divergence), divergence
    assert "Compensate" in divergence
    # Regenerated on purpose, the history holds under the new rule, not the old one.
    regenerated = regenerate(history)
    assert first_divergence(regenerated) is None
    monkeypatch.undo()
    assert first_divergence(regenerated) is not None
    assert first_divergence(history) is None
