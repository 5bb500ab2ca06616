"""The SoA gate asks for a basis when its policy does (ISO/IEC 27001 6.1.3 d): over HTTP,
on the demo's samples assessed against ISO/IEC 27001:2022, an SoA whose statuses are all
decided is still refused while rows rest on nothing, naming them; a treated risk recorded
in the register gives the rows of its controls a basis, a stated legal requirement the
rest, and the same version is then approved. Without the policy the gate names the rows
and approves."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from tests.api.conftest import Api, Headers
from tests.support.http_lifecycle import (
    approve_current,
    approve_scope,
    confirm_proposals,
    select_framework,
    undecided,
)

TENANT = "tenant-basis"
FRAMEWORK = "ISO/IEC 27001:2022"
LEGAL = "Data Protection Act 2018, s. 66 (security of processing)"


def _at_soa_gate(api: Api, owner: Headers, reviewer: Headers, run_id: str) -> dict[str, Any]:
    """Answer every wait before the SoA's gate: the framework, then each earlier gate."""
    while True:
        run = api.follow(
            owner,
            run_id,
            lambda r: r["status"] in ("waiting_for_input", "waiting_for_approval"),
            timeout_s=300,
        )
        if run["current_step"] == Step.WAIT_FOR_FRAMEWORK_SELECTION.value:
            assert select_framework(api, owner, run_id, FRAMEWORK)["fate"] == "applied"
        elif run["current_step"] == Step.WAIT_FOR_SOA_APPROVAL.value:
            approve_scope(api, reviewer, run)
            return run
        else:
            assert approve_current(api, reviewer, run)["fate"] == "applied"


def _people(api: Api, n: int) -> tuple[Headers, Headers, Headers]:
    """Who starts the run, who approves (an assessor) and who decides rows (not the approver)."""
    owner = api.key("signal", "read", tenant=TENANT, principal=f"user:owner{n}@acme")
    reviewer = api.key(
        "approve", "read", tenant=TENANT, principal=f"user:reviewer{n}@acme", roles=("assessor",)
    )
    decider = api.key("approve", "read", tenant=TENANT, principal=f"user:control-owner{n}@acme")
    return owner, reviewer, decider


def _decided_at_soa_gate(
    api: Api, people: tuple[Headers, Headers, Headers], n: int, body: dict[str, Any] | None
) -> tuple[str, dict[str, Any]]:
    """The demo's samples assessed against ISO/IEC 27001, waiting at the SoA's gate with
    every status decided: the assessment's id and the run."""
    owner, reviewer, decider = people
    assessment = api.create_assessment(owner, organization=f"basis-org-{n}")["id"]
    api.upload_samples(owner, assessment)
    started = api.start(owner, assessment, f"basis-{n}", body)
    assert started.status_code in (200, 201), started.text
    run = _at_soa_gate(api, owner, reviewer, started.json()["id"])
    return assessment, confirm_proposals(api, decider, run, undecided(api, owner, run))


def _soa(api: Api, headers: Headers, run_id: str, artifact_id: str) -> list[dict[str, Any]]:
    url = f"/api/v1/workflows/{run_id}/artifacts/{artifact_id}"
    return list(api.client.get(url, headers=headers).json()["content"]["requirements"])


def test_the_soa_gate_refuses_rows_with_no_basis_until_a_risk_or_requirement_is_stated(
    running_api: Api,
) -> None:
    api = running_api
    owner, reviewer, decider = people = _people(api, 1)
    body = {"approval_policies": {"soa": {"require_basis": True}}}
    assessment, run = _decided_at_soa_gate(api, people, 1, body)
    run_id = run["id"]
    gate = undecided(api, owner, run)
    rows = _soa(api, owner, run_id, gate["artifact_id"])
    applicable = [r for r in rows if r.get("applicable") is not False]
    # Every status decided; nothing in the register and nothing stated: no row has a basis.
    assert gate["undecided"] == 0 and gate["basis_required"] is True
    assert gate["no_basis"] == len(applicable) > 0 and gate["ready"] is False

    version = run["context"]["artifacts"]["soa"]
    refused = api.client.post(
        f"/api/v1/workflows/{run_id}/approvals",
        headers=reviewer,
        json={"artifact_kind": "soa", "artifact_version": version},
    )
    assert refused.status_code == 409, refused.text
    problem = refused.json()
    assert problem["code"] == "gate_not_ready"
    assert f"{len(applicable)} of {len(rows)} rows with no basis" in problem["detail"]
    assert problem["readiness"]["no_basis"] == len(applicable)

    # A treated risk whose chosen controls are one row's: that row (and any other row those
    # controls serve) has a basis now, read against the register as it stands.
    chosen = next(r for r in applicable if r.get("scf_controls"))
    controls = list(chosen["scf_controls"])[:1]
    risk = {
        "title": f"{chosen['requirement_id']} not in place",
        "asset": "Customer data",
        "threat": "Disclosure to people who should not see it",
        "vulnerability": "The control is not documented",
        "likelihood": 3,
        "impact": 4,
        "owner": "user:it-lead@acme.example",
        "treatment": "modify",
        "controls": controls,
    }
    made = api.client.post(
        f"/api/v1/assessments/{assessment}/risks",
        headers={**owner, "Idempotency-Key": "basis-risk"},
        json=risk,
    )
    assert made.status_code == 201, made.text
    gate = undecided(api, owner, run)
    served = [r for r in applicable if set(controls) & set(r.get("scf_controls") or [])]
    assert str(chosen["requirement_id"]) not in gate["no_basis_rows"]
    assert gate["no_basis"] == len(applicable) - len(served) and gate["ready"] is False

    # The rest by a stated legal requirement, one amendment naming each row.
    rest = list(gate["no_basis_rows"])
    assert len(rest) == gate["no_basis"]
    amended = api.client.post(
        f"/api/v1/workflows/{run_id}/artifacts/{gate['artifact_id']}/amendments",
        headers={**decider, "Idempotency-Key": f"{run_id}:legal"},
        json={
            "reason": "legal basis agreed with counsel",
            "rows": [{"rows": rest, "changes": {"legal_basis": LEGAL}}],
        },
    )
    assert amended.status_code == 201, amended.text
    new_version = amended.json()["version"]
    run = api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"].get("soa") == new_version
            and r["status"] == "waiting_for_approval"
        ),
    )
    gate = undecided(api, owner, run)
    assert (gate["no_basis"], gate["refusal"], gate["ready"]) == (0, None, True)
    assert approve_current(api, reviewer, run)["fate"] == "applied"


def test_without_the_policy_the_gate_names_rows_with_no_basis_and_approves(
    running_api: Api,
) -> None:
    api = running_api
    owner, reviewer, _ = people = _people(api, 2)
    _, run = _decided_at_soa_gate(api, people, 2, None)
    gate = undecided(api, owner, run)
    assert gate["basis_required"] is False and gate["no_basis"] > 0 and gate["ready"] is True
    assert approve_current(api, reviewer, run)["fate"] == "applied"
