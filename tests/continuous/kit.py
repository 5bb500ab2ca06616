"""What the continuous-assessment tests do over HTTP: an assessment's run driven with an
owner, a reviewer and a control owner deciding rows; its drafts read; catalogue versions
adopted; reassessments awaited and their changed rows approved; evidence requests issued."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.engine.routing import QUEUES
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.api.conftest import SAMPLES, Api, Headers
from tests.support.polling import poll


def fleet_api(
    fleet: Fleet, include: tuple[str, ...] = (), extra_env: dict[str, str] | None = None
) -> Api:
    """The API on the fleet's PostgreSQL and broker, with workers on every queue
    (importing `include`, test hooks)."""
    fleet.start(",".join(QUEUES), concurrency=3, include=include, extra_env=extra_env)
    return Api(TestClient(app))


class Reviewed:
    """An assessment of `tenant` with its samples uploaded and its run started."""

    def __init__(self, api: Api, tenant: str, start_key: str) -> None:
        self.api = api
        self.owner = api.key("signal", "read", tenant=tenant, principal="user:owner@acme")
        self.reviewer = api.key(
            "approve", "read", tenant=tenant, principal="user:reviewer@acme", roles=("assessor",)
        )
        self.decider = api.key(
            "approve", "read", tenant=tenant, principal="user:control-owner@acme"
        )
        self.assessment = api.create_assessment(self.owner)["id"]
        api.upload_samples(self.owner, self.assessment)
        started = api.start(self.owner, self.assessment, start_key)
        assert started.status_code == 201, started.text
        self.run_id = started.json()["id"]

    def get(self, url: str, headers: Headers | None = None) -> Any:
        response = self.api.client.get(url, headers=headers or self.owner)
        assert response.status_code == 200, response.text
        return response.json()

    def artifact(self, artifact_id: str) -> dict[str, Any]:
        return dict(self.get(f"/api/v1/workflows/{self.run_id}/artifacts/{artifact_id}"))

    def approved_soa(self) -> dict[str, Any]:
        listed = self.get(f"/api/v1/workflows/{self.run_id}/artifacts")
        items = listed["items"] if isinstance(listed, dict) else listed
        soa = [a for a in items if a["kind"] == "soa" and a["status"] == "approved"]
        return self.artifact(max(soa, key=lambda a: int(a["version"]))["id"])

    def adopt(self, key: str, target: str, reason: str) -> Any:
        return self.api.client.post(
            f"/api/v1/assessments/{self.assessment}/catalogue-adoptions",
            headers={**self.owner, "Idempotency-Key": key},
            json={"target": target, "reason": reason},
        )

    def reassessments(self) -> list[dict[str, Any]]:
        return list(self.get(f"/api/v1/assessments/{self.assessment}/reassessments"))

    def evaluated(self, reassessment_id: str) -> dict[str, Any]:
        return dict(
            poll(
                lambda: self.get(f"/api/v1/reassessments/{reassessment_id}"),
                lambda r: r["status"] != "pending",
                timeout_s=120,
                what="the reassessment's evaluation",
            )
        )

    def approve_rows(self, found: dict[str, Any]) -> dict[str, Any]:
        """Every changed row approved by the reviewer; the reassessment as it ends."""
        answer: dict[str, Any] = {}
        for row in found["changed_rows"]:
            approved = self.api.client.post(
                f"/api/v1/reassessments/{found['id']}/row-approvals",
                headers=self.reviewer,
                json={"row": row["row"], "row_sha256": row["row_sha256"]},
            )
            assert approved.status_code == 200, approved.text
            answer = approved.json()
        return answer


#: The sample policy the SoA cites, which the continuous tests give a new version.
POLICY = "access-control-policy.md"


def new_policy_version(api: Api, headers: Headers, assessment: str, document: str) -> str:
    """Uploads a new version of the sample policy, its Authentication section cut out (up
    to Remote Access): the rows citing that section change. Returns the version's id."""
    whole = (SAMPLES / POLICY).read_text()
    cut = whole[: whole.index("## Authentication")] + whole[whole.index("## Remote Access") :]
    version = api.client.post(
        f"/api/v1/assessments/{assessment}/documents/{document}/versions",
        headers=headers,
        files={"file": (POLICY, cut.encode(), "text/markdown")},
    )
    assert version.status_code == 201, version.text
    return str(version.json()["id"])


def issue_request(api: Api, headers: Headers, assessment: str) -> dict[str, Any]:
    """An evidence request for two requirements, due in ten days; its link is in `link`."""
    response = api.client.post(
        f"/api/v1/assessments/{assessment}/evidence-requests",
        headers=headers,
        json={
            "requirements": ["SCF IAC-17", "SOC 2 CC6.1"],
            "recipient": "it-ops@vendor.example",
            "instructions": "Send <b>last quarter's</b> access review export.",
            "due_on": (date.today() + timedelta(days=10)).isoformat(),
        },
    )
    assert response.status_code == 201, response.text
    return dict(response.json())
