"""A reviewer's "not a gap", through HTTP only: marked on the gap draft with a reason, it
leaves the POA&M and the report's gap list (shown as dismissed, with the reason and who),
and the next period's assessment carries it."""

from __future__ import annotations

import csv
import io
from functools import partial
from typing import Any

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from tests.api.conftest import Api, Headers
from tests.support.http_lifecycle import approve_current, drive_to_completion
from tests.support.polling import poll

TENANT = "tenant-not-a-gap"
DECIDER = "user:assessor@acme"
SETTLED = {"succeeded", "failed", "cancelled"}
WHY = "Access reviews are run in the identity provider; seen on site with the auditor."


def _people(api: Api) -> tuple[Headers, Headers, Headers]:
    owner = api.key("signal", "read", tenant=TENANT, principal="user:owner@acme")
    reviewer = api.key(
        "approve", "read", tenant=TENANT, principal="user:reviewer@acme", roles=("assessor",)
    )
    decider = api.key("approve", "read", tenant=TENANT, principal=DECIDER)
    return owner, reviewer, decider


def _latest(api: Api, headers: Headers, run_id: str, kind: str) -> dict[str, Any]:
    listed = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts", headers=headers, params={"kind": kind}
    ).json()
    newest = max(listed, key=lambda a: a["version"])
    detail = api.client.get(f"/api/v1/workflows/{run_id}/artifacts/{newest['id']}", headers=headers)
    assert detail.status_code == 200, detail.text
    return dict(detail.json())


def _amend(
    api: Api, headers: Headers, run_id: str, artifact_id: str, changes: dict[str, Any], row: str
) -> Any:
    return api.client.post(
        f"/api/v1/workflows/{run_id}/artifacts/{artifact_id}/amendments",
        headers=headers,
        json={
            "reason": "decided in the review meeting",
            "rows": [{"row": row, "changes": changes}],
        },
    )


def _job_statuses(api: Api, headers: Headers, run_id: str) -> set[str]:
    jobs = api.client.get(f"/api/v1/workflows/{run_id}/jobs", headers=headers)
    assert jobs.status_code == 200, jobs.text
    return {str(job["status"]) for job in jobs.json()}


def _started(
    api: Api, owner: Headers, name: str, carry_over_from: str | None = None
) -> tuple[str, str]:
    """A new assessment with the sample documents, its lifecycle started: (assessment, run)."""
    body: dict[str, Any] = {"organization_id": "acme-org", "name": name}
    if carry_over_from:
        body["carry_over_from"] = carry_over_from
    created = api.client.post("/api/v1/assessments", headers=owner, json=body)
    assert created.status_code == 201, created.text
    assessment = created.json()["id"]
    api.upload_samples(owner, assessment)
    started = api.start(owner, assessment, f"{name}:start")
    assert started.status_code == 201, started.text
    return assessment, str(started.json()["id"])


def test_not_a_gap_over_http_leaves_the_poam_and_carries_to_the_next_period(
    running_api: Api,
) -> None:
    api = running_api
    owner, reviewer, decider = _people(api)
    assessment, run_id = _started(api, owner, "FY27 assessment")
    run = drive_to_completion(
        api, owner, reviewer, run_id, decider, stop_at=Step.WAIT_FOR_GAP_APPROVAL
    )
    draft = _latest(api, owner, run_id, "gap_analysis")
    gaps = draft["content"]["gaps"]
    name = str(next(g for g in gaps if g["documents"])["control_id"])

    unreasoned = _amend(api, decider, run_id, draft["id"], {"not_a_gap": True}, name)
    assert unreasoned.status_code == 422, unreasoned.text
    assert "not_a_gap_reason" in unreasoned.json()["detail"], unreasoned.json()
    marked = _amend(
        api, decider, run_id, draft["id"], {"not_a_gap": True, "not_a_gap_reason": WHY}, name
    )
    assert marked.status_code == 201, marked.text
    run = api.follow(
        owner,
        run_id,
        lambda r: (
            r["context"]["artifacts"]["gap_analysis"] == marked.json()["version"]
            and r["status"] == "waiting_for_approval"
        ),
    )
    assert approve_current(api, reviewer, run)["fate"] == "applied"
    drive_to_completion(api, owner, reviewer, run_id, decider)

    poam = _latest(api, owner, run_id, "poam")["content"]
    assert name not in {i["control_id"] for i in poam["items"]}
    assert len(poam["items"]) == len(gaps) - 1
    report = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=owner, params={"format": "json"}
    ).json()
    assert [(d["control_id"], d["reason"], d["by"]) for d in report["not_a_gap"]] == [
        (name, WHY, DECIDER)
    ]
    assert report["summary"]["Findings dismissed as not a gap (by a reviewer)"] == 1
    html = api.client.get(f"/api/v1/workflows/{run_id}/report", headers=owner).text
    gap_list, dismissed = html.split('id="gaps"')[1].split("</section>")[0].split("Dismissed")
    assert f"<td>{name}</td>" not in gap_list
    assert f"<td>{name}</td>" in dismissed and WHY in dismissed and DECIDER in dismissed
    exported = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=owner, params={"format": "poam_csv"}
    )
    items = list(csv.DictReader(io.StringIO(exported.content.decode("utf-8-sig"))))
    assert len(items) == len(gaps) - 1

    # The next period: the same documents uploaded again, the decision holds.
    _, following = _started(api, owner, "FY28 assessment", carry_over_from=assessment)
    drive_to_completion(
        api, owner, reviewer, following, decider, stop_at=Step.WAIT_FOR_GAP_APPROVAL
    )
    carried = _latest(api, owner, following, "gap_analysis")["content"]
    finding = next(g for g in carried["gaps"] if g["control_id"] == name)
    assert finding["not_a_gap"] is True and finding["not_a_gap_reason"] == WHY
    assert not finding.get("not_a_gap_review"), "the same documents: the decision holds"
    assert [r["control_id"] for r in carried["not_a_gap_carried_over"]["rows"]] == [name]

    # At its gate a run has no job in flight: the module's worker then stops with none
    # running (a job thread outliving it would read the next module's settings).
    for waiting in (run_id, following):
        poll(
            partial(_job_statuses, api, owner, waiting),
            lambda statuses: statuses <= SETTLED,
            what=f"the jobs of run {waiting} settled",
        )
