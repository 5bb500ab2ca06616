"""Driving a run through the HTTP API the way a reviewer's client would."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import APPROVAL_SIGNALS
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from orchestrator.service.row_filter import matching_rows
from tests.api.conftest import Api, Headers
from tests.support.services import SMALL_FRAMEWORK

SIGNAL_FOR_KIND = {kind.value: signal.value for signal, kind in APPROVAL_SIGNALS.items()}


def select_framework(
    api: Api, headers: Headers, run_id: str, framework: str = SMALL_FRAMEWORK
) -> dict[str, Any]:
    response = api.client.post(
        f"/api/v1/workflows/{run_id}/signals",
        params={"wait": 10},
        headers={**headers, "Idempotency-Key": f"{run_id}:framework"},
        json={"type": "framework_selected", "payload": {"framework": framework}},
    )
    assert response.status_code == 202, response.text
    return dict(response.json())


def approve_current(api: Api, reviewer: Headers, run: dict[str, Any]) -> dict[str, Any]:
    """Record an approval of the version waiting, then send the signal naming it."""
    kind = APPROVED_AT[Step(run["current_step"])].value
    return approve(api, reviewer, run, kind, int(run["context"]["artifacts"][kind]))


def approve(
    api: Api, reviewer: Headers, run: dict[str, Any], kind: str, version: int
) -> dict[str, Any]:
    event = api.client.post(
        f"/api/v1/workflows/{run['id']}/approvals",
        headers=reviewer,
        json={
            "artifact_kind": kind,
            "artifact_version": version,
            "comment": f"{kind} v{version} reviewed",
        },
    )
    assert event.status_code == 201, event.text
    receipt = api.client.post(
        f"/api/v1/workflows/{run['id']}/signals",
        params={"wait": 10},
        headers={**reviewer, "Idempotency-Key": f"{run['id']}:{kind}:{version}"},
        json={"type": SIGNAL_FOR_KIND[kind], "approval_event_id": event.json()["id"]},
    )
    assert receipt.status_code == 202, receipt.text
    return dict(receipt.json())


def undecided(api: Api, headers: Headers, run: dict[str, Any]) -> dict[str, Any]:
    """The readiness of the draft waiting at the run's gate."""
    gates = api.client.get(f"/api/v1/workflows/{run['id']}/gates", headers=headers)
    assert gates.status_code == 200, gates.text
    kind = APPROVED_AT[Step(run["current_step"])].value
    return next(g for g in gates.json() if g["artifact_kind"] == kind)


def proposals_confirmed(kind: str, content: dict[str, Any]) -> dict[str, Any]:
    """The amendment confirming what a draft proposes for its undecided rows (the SoA's
    implementation statuses, the POA&M's owners)."""
    field, proposed = (
        ("implementation_status", "proposed_implementation_status")
        if kind == "soa"
        else ("owner", "proposed_owner")
    )
    # The undecided rows only: a filter selecting no row is refused.
    open_rows = matching_rows(kind, content, {"undecided": True})
    values = sorted({r[proposed] for r in open_rows if r.get(proposed)} - {"not_applicable"})
    return {
        "reason": "proposals confirmed in the review meeting",
        "rows": [
            {"filter": {"undecided": True, proposed: v}, "changes": {field: v}} for v in values
        ],
    }


def confirm_proposals(
    api: Api, decider: Headers, run: dict[str, Any], gate: dict[str, Any]
) -> dict[str, Any]:
    """One bulk amendment confirming what the draft proposes for its undecided rows (the
    SoA's implementation statuses, the POA&M's owners); the run then waits at the new
    version."""
    content = api.client.get(
        f"/api/v1/workflows/{run['id']}/artifacts/{gate['artifact_id']}", headers=decider
    ).json()["content"]
    response = api.client.post(
        f"/api/v1/workflows/{run['id']}/artifacts/{gate['artifact_id']}/amendments",
        headers={**decider, "Idempotency-Key": f"{run['id']}:{gate['artifact_kind']}:decide"},
        json=proposals_confirmed(gate["artifact_kind"], content),
    )
    assert response.status_code == 201, response.text
    version = response.json()["version"]
    kind = gate["artifact_kind"]
    return api.follow(
        decider,
        run["id"],
        lambda r: (
            r["context"]["artifacts"].get(kind) == version and r["status"] == "waiting_for_approval"
        ),
    )


def approve_scope(api: Api, reviewer: Headers, run: dict[str, Any]) -> None:
    """The scope the SoA rests on, approved at the SoA gate (the report names it otherwise)."""
    drafted = run["context"]["artifacts"].get("scope")
    if drafted is not None and run["context"].get("approved", {}).get("scope") != drafted:
        assert approve(api, reviewer, run, "scope", int(drafted))["fate"] == "applied"


def drive_to_completion(
    api: Api,
    owner: Headers,
    reviewer: Headers,
    run_id: str,
    decider: Headers | None = None,
    stop_at: Step | None = None,
) -> dict[str, Any]:
    """Answer every wait: the framework, then each gate (the scope with the SoA; rows a gate
    needs decided are confirmed in bulk by `decider`, who may not then approve). With
    `stop_at`, the run is returned waiting there, its draft neither decided nor approved."""
    while True:
        run = api.follow(
            owner,
            run_id,
            lambda r: r["status"] in ("waiting_for_input", "waiting_for_approval", "completed"),
            # As long as through_soa_approval waits: the report of a whole-catalogue (SCF)
            # run renders hundreds of PDF pages, over a minute on 2 cores, more under coverage.
            timeout_s=300,
        )
        if run["status"] == "completed" or (stop_at and run["current_step"] == stop_at.value):
            return run
        if run["current_step"] == Step.WAIT_FOR_FRAMEWORK_SELECTION.value:
            assert select_framework(api, owner, run_id)["fate"] == "applied"
        else:
            assert run["status"] == "waiting_for_approval", run
            if run["current_step"] == Step.WAIT_FOR_SOA_APPROVAL.value:
                approve_scope(api, reviewer, run)
            gate = undecided(api, owner, run)
            if gate["required"] and gate["undecided"]:
                assert decider is not None, f"{gate['artifact_kind']} needs rows decided: {gate}"
                run = confirm_proposals(api, decider, run, gate)
            assert approve_current(api, reviewer, run)["fate"] == "applied"


def through_soa_approval(
    api: Api, owner: Headers, reviewer: Headers, run_id: str, decider: Headers, framework: str
) -> None:
    """Answer every wait (`framework` selected) until the SoA is approved; the run goes on."""
    while True:
        run = api.follow(
            owner,
            run_id,
            lambda r: r["status"] in ("waiting_for_input", "waiting_for_approval", "completed"),
            timeout_s=300,
        )
        if run["context"].get("approved", {}).get("soa"):
            return
        if run["current_step"] == Step.WAIT_FOR_FRAMEWORK_SELECTION.value:
            assert select_framework(api, owner, run_id, framework)["fate"] == "applied"
            continue
        assert run["status"] == "waiting_for_approval", run
        if run["current_step"] == Step.WAIT_FOR_SOA_APPROVAL.value:
            approve_scope(api, reviewer, run)
        gate = undecided(api, owner, run)
        if gate["required"] and gate["undecided"]:
            run = confirm_proposals(api, decider, run, gate)
        assert approve_current(api, reviewer, run)["fate"] == "applied"
        if run["current_step"] == Step.WAIT_FOR_SOA_APPROVAL.value:
            return
