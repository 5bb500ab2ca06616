"""One whole lifecycle through a client generated from the OpenAPI document, with the
embedded worker the other HTTP lifecycle tests use: the owner creates the assessment,
uploads and starts; a control owner decides the rows each gate needs decided; a reviewer,
another person, approves every gate; the report is fetched. The one who amended a version
may not approve it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.lifecycle.definition import APPROVED_AT
from tests.api.conftest import SAMPLES, Api
from tests.support.generated_client import GeneratedClient, generated_client
from tests.support.http_lifecycle import SIGNAL_FOR_KIND, proposals_confirmed
from tests.support.polling import poll

TENANT = "tenant-generated"
OWNER, DECIDER, REVIEWER = "user:owner@acme", "user:control-owner@acme", "user:reviewer@acme"
SETTLED = ("waiting_for_input", "waiting_for_approval", "completed")


class People:
    """The generated operations, called as each of the three people."""

    def __init__(self, api: Api, generated: GeneratedClient) -> None:
        self.generated = generated
        self.amended: list[str] = []  # the versions the control owner's decisions wrote
        self.models = generated.models
        self.owner = generated.client(api.key("signal", "read", tenant=TENANT, principal=OWNER))
        self.decider = generated.client(
            api.key("approve", "read", tenant=TENANT, principal=DECIDER)
        )
        self.reviewer = generated.client(
            api.key("approve", "read", tenant=TENANT, principal=REVIEWER, roles=("assessor",))
        )

    def call(self, operation: str, *args: Any, expect: int, **kwargs: Any) -> Any:
        response = self.generated.operation(operation).sync_detailed(*args, **kwargs)
        assert response.status_code == expect, response.content
        return response.parsed

    def run(self, run_id: str) -> dict[str, Any]:
        return dict(
            self.call("lifecycle.lifecycle_read", run_id, client=self.owner, expect=200).to_dict()
        )

    def follow(self, run_id: str, until: Any) -> dict[str, Any]:
        def observe() -> dict[str, Any]:
            run = self.run(run_id)
            assert run["status"] not in ("failed", "cancelled"), run
            return run

        # As long as the other whole-lifecycle tests wait: a report renders slowly on 2 cores.
        return poll(observe, until, timeout_s=300, what=f"run {run_id}", interval_s=0.05)

    def signal(self, client: Any, run_id: str, body: dict[str, Any], key: str) -> None:
        receipt = self.call(
            "lifecycle.lifecycle_signal",
            run_id,
            client=client,
            body=self.models.SignalRequest.from_dict(body),
            wait=10,
            idempotency_key=key,
            expect=202,
        )
        assert receipt.fate == "applied", receipt.to_dict()

    def approve(self, run_id: str, kind: str, version: int) -> None:
        event = self.call(
            "approvals.approvals_record",
            run_id,
            client=self.reviewer,
            body=self.models.ApprovalRequest.from_dict(
                {"artifact_kind": kind, "artifact_version": version, "comment": "reviewed"}
            ),
            expect=201,
        )
        body = {"type": SIGNAL_FOR_KIND[kind], "approval_event_id": str(event.id)}
        self.signal(self.reviewer, run_id, body, f"{run_id}:{kind}:{version}")

    def decide_rows(self, run: dict[str, Any], gate: dict[str, Any]) -> dict[str, Any]:
        """The control owner confirms the proposals (the reviewer approves what they wrote)."""
        run_id, kind = run["id"], gate["artifact_kind"]
        artifact = self.call(
            "artifacts.artifacts_read",
            run_id,
            gate["artifact_id"],
            client=self.decider,
            expect=200,
        )
        amended = self.call(
            "amendments.amendments_amend",
            run_id,
            gate["artifact_id"],
            client=self.decider,
            body=self.models.AmendmentRequest.from_dict(
                proposals_confirmed(kind, artifact.content.to_dict())
            ),
            idempotency_key=f"{run_id}:{kind}:decide",
            expect=201,
        )
        self.amended.append(str(amended.artifact_id))
        return self.follow(
            run_id,
            lambda r: (
                r["context"]["artifacts"].get(kind) == amended.version
                and r["status"] == "waiting_for_approval"
            ),
        )


def _drive(people: People, run_id: str) -> dict[str, Any]:
    """Answer every wait as the lifecycle asks, through the generated client only."""
    while True:
        run = people.follow(run_id, lambda r: r["status"] in SETTLED)
        if run["status"] == "completed":
            return run
        if run["current_step"] == Step.WAIT_FOR_FRAMEWORK_SELECTION.value:
            body = {"type": "framework_selected", "payload": {"framework": "SOC 2"}}
            people.signal(people.owner, run_id, body, f"{run_id}:framework")
            continue
        assert run["status"] == "waiting_for_approval", run
        artifacts, approved = run["context"]["artifacts"], run["context"].get("approved", {})
        if run["current_step"] == Step.WAIT_FOR_SOA_APPROVAL.value and approved.get(
            "scope"
        ) != artifacts.get("scope"):
            people.approve(run_id, "scope", int(artifacts["scope"]))
        kind = APPROVED_AT[Step(run["current_step"])].value
        gates = people.call("approvals.approvals_gates", run_id, client=people.owner, expect=200)
        gate = next(g.to_dict() for g in gates if g.artifact_kind == kind)
        if gate["required"] and gate["undecided"]:
            run = people.decide_rows(run, gate)
        people.approve(run_id, kind, int(run["context"]["artifacts"][kind]))


def test_a_generated_client_drives_a_whole_lifecycle(running_api: Api, tmp_path: Path) -> None:
    with generated_client(tmp_path) as generated:
        people = People(running_api, generated)
        models, types = generated.models, generated.types
        assessment = people.call(
            "assessments.assessments_create",
            client=people.owner,
            body=models.CreateAssessment(organization_id="acme-org", name="2027 SOC 2"),
            idempotency_key="generated-2027",
            expect=201,
        )
        for path in sorted(SAMPLES.iterdir()):
            with path.open("rb") as payload:
                people.call(
                    "assessments.assessments_upload",
                    assessment.id,
                    client=people.owner,
                    body=models.AssessmentsUploadBody(
                        file=types.File(payload=payload, file_name=path.name)
                    ),
                    expect=201,
                )
        run = people.call(
            "lifecycle.lifecycle_start",
            assessment.id,
            client=people.owner,
            body=models.StartLifecycle(),
            idempotency_key="generated-run",
            expect=201,
        )
        run_id = str(run.id)

        completed = _drive(people, run_id)

        assert completed["completed_at"]
        approvals = people.call(
            "approvals.approvals_index", run_id, client=people.owner, expect=200
        )
        # The scope and the five gates, each approved by the reviewer and consumed by the run.
        assert len(approvals) == 6 and all(a.consumed_by_signal_id for a in approvals)
        assert {a.approver_id for a in approvals} == {REVIEWER}
        approved = {(a.artifact_kind, a.artifact_version) for a in approvals}
        # Rows were decided by the control owner, and what they wrote the reviewer approved.
        assert people.amended
        for artifact_id in people.amended:
            detail = people.call(
                "artifacts.artifacts_read", run_id, artifact_id, client=people.owner, expect=200
            )
            content = detail.content.to_dict()
            authors = {a["by"] for a in content["amendments"] if a["version"] == detail.version}
            assert authors == {DECIDER}
            assert (detail.kind, detail.version) in approved
        report = generated.operation("artifacts.artifacts_report").sync_detailed(
            run_id, client=people.owner
        )
        assert report.status_code == 200
        assert report.content.startswith(b"<!DOCTYPE html>")
