"""Sign-off policies check the roles an approval event carries (the roles its principal
held when it was recorded), for role-based and designated-approver gates alike."""

from __future__ import annotations

from orchestrator.lifecycle.policies import GatePolicy, SignoffMode


def test_a_role_based_gate_accepts_an_event_carrying_any_allowed_role() -> None:
    gate = GatePolicy(roles=("ciso",))
    assert gate.eligibility_problem("user:ana", ("assessor", "ciso")) is None
    refused = gate.eligibility_problem("user:rui", ("assessor",))
    assert refused is not None and "'assessor' may not approve" in refused
    none_held = gate.eligibility_problem("user:rui", ())
    assert none_held is not None and "none may not approve" in none_held


def test_a_designated_approver_still_needs_an_allowed_role() -> None:
    gate = GatePolicy(
        mode=SignoffMode.N_OF_M,
        approvers=("user:a", "user:b"),
        roles=("compliance_lead",),
        required=1,
    )
    assert gate.eligibility_problem("user:a", ("compliance_lead",)) is None
    without_role = gate.eligibility_problem("user:a", ("assessor",))
    assert without_role is not None and "may not approve" in without_role
    outsider = gate.eligibility_problem("user:c", ("compliance_lead",))
    assert outsider == "user:c is not a designated approver of this gate"
