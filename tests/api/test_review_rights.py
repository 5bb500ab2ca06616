"""A reviewer's rejection is the run's visible reason, and that reviewer may ask for the
next version of the draft without operator rights (no one else may)."""

from __future__ import annotations

from tests.api.conftest import Api, waiting_at
from tests.api.test_operations_http import _code, _run_to_framework
from tests.support.http_lifecycle import approve_current, select_framework


def test_a_rejection_shows_its_comment_and_its_reviewer_asks_for_the_next_version(
    running_api: Api,
) -> None:
    api = running_api
    tenant = "tenant-review-rights"
    owner = api.key("signal", "read", tenant=tenant)
    reviewer = api.key(
        "approve", "read", tenant=tenant, principal="user:reviewer@acme", roles=("assessor",)
    )
    other_reviewer = api.key(
        "approve", "read", tenant=tenant, principal="user:other@acme", roles=("assessor",)
    )
    run_id = _run_to_framework(api, owner)
    select_framework(api, owner, run_id)
    api.follow(owner, run_id, waiting_at("wait_for_soa_approval"))
    base = f"/api/v1/workflows/{run_id}"
    ask = {"artifact_kind": "soa", "reason": "apply the reviewer's comments"}

    early = api.client.post(f"{base}/new-version", headers=reviewer, json=ask)
    assert _code(early) == (403, "insufficient_scope"), "nothing was sent back yet"

    sent_back = api.client.post(
        f"{base}/approvals",
        headers=reviewer,
        json={
            "artifact_kind": "soa",
            "artifact_version": 1,
            "decision": "changes_requested",
            "comment": "Exclude physical security: we have no data centre.",
        },
    )
    assert sent_back.status_code == 201, sent_back.text
    run = api.follow(owner, run_id, waiting_at("wait_for_soa_approval", "waiting_for_input"))
    assert run["reason"] == (
        "soa v1 changes_requested by user:reviewer@acme: "
        "Exclude physical security: we have no data centre."
    )

    assert _code(api.client.post(f"{base}/new-version", headers=other_reviewer, json=ask)) == (
        403,
        "insufficient_scope",
    )
    assert _code(api.client.post(f"{base}/new-version", headers=owner, json=ask)) == (
        403,
        "insufficient_scope",
    )
    revised = api.client.post(
        f"{base}/new-version", params={"wait": 10}, headers=reviewer, json=ask
    )
    assert (revised.status_code, revised.json()["fate"]) == (202, "applied"), revised.text
    run = api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"].get("soa") == 2 and r["status"] == "waiting_for_approval"
        ),
    )
    assert run["reason"] is None
    # The right covered the version sent back, not the next one.
    again = api.client.post(f"{base}/new-version", headers=reviewer, json=ask)
    assert _code(again) == (403, "insufficient_scope")
    # Asking for changes is reviewing, not drafting: the reviewer may judge version 2.
    assert approve_current(api, reviewer, run)["fate"] == "applied"
    api.follow(owner, run_id, lambda r: r["context"]["approved"].get("soa") == 2)
