"""A handoff in the console: the run page shows it with the run's effects, origin,
authority and definition; the owner sees it marked as theirs; an operator claims it and
resolves it once; a second operator is told who holds it."""

from __future__ import annotations

from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.contracts.identity import Actor
from orchestrator.engine.coordinator import coordinate
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.service.apikeys import authenticate
from orchestrator.service.authority import RunAuthority
from orchestrator.service.documents import upload_document
from orchestrator.service.handoffs import list_handoffs
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from tests.console.kit import Browser, key, text
from tests.support.outside_effects import effects
from tests.support.roles import grant
from tests.support.sweeps import Clock, drive_to, no_kick
from tests.support.webhook_receiver import Receiver

TENANT = "acme"


def test_an_operator_resolves_a_handoff_from_the_console(quick: Clock, receiver: Receiver) -> None:
    owner_key = key("read", "signal", principal="user:owner@acme")
    owner = authenticate(owner_key)
    assert owner is not None
    reviewer = grant(Actor(TENANT, "user:rui@acme"))
    add_export_target(owner.actor, receiver.url)
    assessment = create_assessment(owner.actor, "org-1", "Console handoff")
    upload_document(owner.actor, assessment.id, "p.md", b"# Policy\n\nMFA.", kick=no_kick)
    run = start_lifecycle(
        owner.actor,
        assessment.id,
        "console-handoff",
        kick=no_kick,
        origin="user",
        authority=RunAuthority.of_principal(owner),
    )
    drive_to(reviewer, run.id, "wait_for_report_approval")
    receiver.stalled.set()
    perform_effect(effects(owner.actor, run.id)[0].id)
    coordinate(run.id)
    [handoff] = list_handoffs(owner.actor, run_id=run.id)

    mine = Browser(TestClient(app))
    mine.sign_in(owner_key)
    page = text(mine.get(f"/console/runs/{run.id}"))
    assert "Started by user" in page and f"API key {owner.key_id}" in page
    assert "Definition v1" in page and "export report v1 outcome_unknown 1" in page
    assert "open: decide" in page
    listed = text(mine.get("/console/handoffs"))
    assert "(your run)" in listed and "sent, no answer" in listed
    refused = mine.post(f"/console/handoffs/{handoff.id}/claim", {}, from_page="/console/handoffs")
    assert refused.status_code == 403  # reading is not operating

    ana, rui = Browser(TestClient(app)), Browser(TestClient(app))
    ana.sign_in(key("read", "operate", principal="user:ana@acme"))
    rui.sign_in(key("read", "operate", principal="user:rui@acme"))
    assert ana.post(f"/console/handoffs/{handoff.id}/claim", {}).status_code == 303
    taken = rui.post(
        f"/console/handoffs/{handoff.id}/resolve",
        {"action": "confirm_absent", "comment": "not there"},
    )
    assert taken.status_code == 409 and "claimed by user:ana@acme" in text(taken)
    held = list_handoffs(owner.actor, run_id=run.id)[0]
    done = ana.post(
        f"/console/handoffs/{handoff.id}/resolve",
        {"action": "confirm_effect", "evidence_ref": "store 12", "fence": str(held.fence)},
    )
    assert done.status_code == 303
    coordinate(run.id)
    assert get_run(owner.actor, run.id).status == "waiting_for_approval"
    page = text(mine.get(f"/console/runs/{run.id}"))
    assert "confirm_effect by user:ana@acme" in page and "evidence: store 12" in page
