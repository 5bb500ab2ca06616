"""Handoffs, effects, definitions and histories from the CLI (in-process, embedded)."""

from __future__ import annotations

import json
from pathlib import Path

from orchestrator.contracts.identity import Actor
from orchestrator.engine.coordinator import coordinate
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.service.producer import get_run
from tests.support.cli import here, here_json
from tests.support.outside_effects import at_report, effects
from tests.support.sweeps import Clock, drive_to, new_tenant, start_run
from tests.support.webhook_receiver import Receiver


def test_an_operator_finds_claims_and_resolves_a_handoff_from_the_cli(
    quick: Clock, receiver: Receiver, tmp_path: Path
) -> None:
    owner, reviewer = new_tenant()
    run_id = at_report(owner, reviewer, receiver.url)
    receiver.stalled.set()
    perform_effect(effects(owner, run_id)[0].id)
    coordinate(run_id)

    [listed] = [h for h in here_json("handoff", "list") if h["run_id"] == str(run_id)]
    shown = here("handoff", "show", listed["id"])
    assert shown.exit_code == 0 and "outcome_unknown" in shown.output
    assert "confirm_effect, confirm_absent, cancel" in shown.output
    claim = here_json("handoff", "claim", listed["id"], "--actor", "operator:ana")
    assert claim["claimed_by"] == "operator:ana"

    bare = here("handoff", "resolve", listed["id"], "--action", "confirm_effect")
    assert bare.exit_code == 1 and "evidence reference or a comment" in bare.output
    other = here(
        "handoff",
        "resolve",
        listed["id"],
        "--action",
        "cancel",
        "--comment",
        "x",
        "--actor",
        "op:rui",
    )
    assert other.exit_code == 1 and "handoff_conflict" in other.output
    assert "claimed by operator:ana" in other.output
    done = here_json(
        "handoff",
        "resolve",
        listed["id"],
        "--action",
        "confirm_effect",
        "--evidence",
        "store record 12",
        "--fence",
        str(claim["fence"]),
        "--actor",
        "operator:ana",
    )
    assert (done["status"], done["resolved_by"]) == ("resolved", "operator:ana")
    [effect] = here_json("effects", str(run_id))
    assert effect["status"] == "confirmed"
    coordinate(run_id)
    assert get_run(owner, run_id).status == "waiting_for_approval"
    assert all(h["run_id"] != str(run_id) for h in here_json("handoff", "list"))

    adopted = here_json("adopt", str(run_id), "--reason", "owner left", "--actor", "operator:ana")
    assert adopted == {"principal": "operator:ana", "key_id": None, "scopes": []}
    assert get_run(Actor(owner.tenant_id, "x"), run_id).authority == adopted


def test_definitions_and_histories_from_the_cli(quick: Clock, tmp_path: Path) -> None:
    [shipped] = here_json("definitions")
    assert (shipped["version"], shipped["current"]) == (1, True)
    assert len(shipped["content_hash"]) == 64 and shipped["publishes"] == ["report"]

    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    drive_to(reviewer, run_id, "wait_for_soa_approval")
    path = tmp_path / "run.json"
    exported = here("history", "export", str(run_id), "--output", str(path))
    assert exported.exit_code == 0, exported.output
    recorded = json.loads(path.read_text())
    assert recorded["definition"]["version"] == 1 and recorded["decisions"]
    assert here("history", "check", str(path)).exit_code == 0

    recorded["decisions"][1]["expected"]["fate"] = "ignored"
    path.write_text(json.dumps(recorded))
    diverged = here("history", "check", str(path))
    assert diverged.exit_code == 1
    assert "decision 1 (documents_uploaded): fate 'ignored' recorded, 'applied' now" in (
        diverged.output
    )
    assert here("history", "regenerate", str(path)).exit_code == 0
    assert here("history", "check", str(path)).exit_code == 0
