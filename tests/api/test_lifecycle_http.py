"""Runs that move, through HTTP only: a whole assessment, and cancel, block and resume."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from orchestrator.cli.group import lifecycle
from orchestrator.contracts.steps import STEP_ORDER
from tests.api.conftest import Api, Headers, waiting_at
from tests.support.http_lifecycle import drive_to_completion, select_framework


def _all_pages(api: Api, headers: Headers, url: str, limit: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    params: dict[str, Any] = {"limit": limit}
    while True:
        page = api.client.get(url, headers=headers, params=params)
        assert page.status_code == 200, page.text
        body = page.json()
        assert len(body["items"]) <= limit
        items += body["items"]
        if body["next_cursor"] is None:
            return items
        params["cursor"] = body["next_cursor"]


def test_a_whole_lifecycle_through_http(running_api: Api) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant="tenant-happy", principal="user:owner@acme")
    reviewer = api.key(
        "approve",
        "read",
        tenant="tenant-happy",
        principal="user:reviewer@acme",
        roles=("assessor",),
    )
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])

    started = api.start(owner, assessment["id"], "acme-2027")
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    assert started.headers["location"] == f"/api/v1/workflows/{run_id}"
    replayed = api.start(owner, assessment["id"], "acme-2027")
    assert (replayed.status_code, replayed.json()["id"]) == (201, run_id)
    lifecycle = api.client.get(
        f"/api/v1/assessments/{assessment['id']}/workflows/lifecycle", headers=owner
    )
    assert lifecycle.json()["id"] == run_id

    decider = api.key("approve", "read", tenant="tenant-happy", principal="user:control-owner@acme")
    run = drive_to_completion(api, owner, reviewer, run_id, decider)
    assert run["status"] == "completed" and run["completed_at"]

    steps = api.client.get(f"/api/v1/workflows/{run_id}/steps", headers=owner).json()
    assert [s["step"] for s in steps] == [step.value for step in STEP_ORDER]
    assert {s["status"] for s in steps} == {"completed"}
    jobs = api.client.get(f"/api/v1/workflows/{run_id}/jobs", headers=owner).json()
    assert jobs and {job["status"] for job in jobs} == {"succeeded"}

    audit = _all_pages(api, owner, f"/api/v1/workflows/{run_id}/audit", limit=7)
    ids = [event["id"] for event in audit]
    assert ids == sorted(set(ids)), "pages neither overlap nor skip"
    kinds = {event["event_type"] for event in audit}
    assert {
        "lifecycle_workflow_started",
        "lifecycle_workflow_waiting_for_approval",
        "lifecycle_workflow_completed",
    } <= kinds
    approvers = {
        e["actor_id"] for e in audit if e["event_type"] == "lifecycle_workflow_approval_accepted"
    }
    assert approvers == {"user:reviewer@acme"}

    signals = _all_pages(api, owner, f"/api/v1/workflows/{run_id}/signals", limit=4)
    assert signals[0]["type"] == "workflow_start_requested"
    assert {s["fate"] for s in signals if s["actor_id"] == "user:reviewer@acme"} == {"applied"}
    assert all(s["fate"] != "pending" for s in signals)
    one = api.client.get(
        f"/api/v1/workflows/{run_id}/signals/{signals[-1]['signal_id']}", headers=owner
    )
    assert one.json() == signals[-1]

    approvals = api.client.get(f"/api/v1/workflows/{run_id}/approvals", headers=owner).json()
    # The scope and the five gates.
    assert len(approvals) == 6 and all(a["consumed_by_signal_id"] for a in approvals)
    assert {a["approver_id"] for a in approvals} == {"user:reviewer@acme"}

    _check_artifacts(api, owner, run_id)
    completed = api.client.get(
        "/api/v1/workflows", headers=owner, params={"status": "completed"}
    ).json()
    assert [r["id"] for r in completed["items"]] == [run_id]
    waiting = api.client.get(
        "/api/v1/workflows", headers=owner, params={"waiting_for_approval": True}
    ).json()
    assert waiting["items"] == []


def _check_artifacts(api: Api, headers: Headers, run_id: str) -> None:
    artifacts = api.client.get(f"/api/v1/workflows/{run_id}/artifacts", headers=headers).json()
    kinds = {a["kind"] for a in artifacts}
    assert {"scope", "soa", "gap_analysis", "maturity_assessment", "poam", "report"} <= kinds
    soa = next(a for a in artifacts if a["kind"] == "soa")
    detail = api.client.get(f"/api/v1/workflows/{run_id}/artifacts/{soa['id']}", headers=headers)
    assert detail.status_code == 200 and detail.json()["content"]
    download = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts/{soa['id']}/download", headers=headers
    )
    assert download.headers["content-type"] == "application/json"
    assert download.json() == detail.json()["content"]
    assert "soa-v1.json" in download.headers["content-disposition"]
    only_reports = api.client.get(
        f"/api/v1/workflows/{run_id}/artifacts", headers=headers, params={"kind": "report"}
    ).json()
    assert {a["kind"] for a in only_reports} == {"report"}
    report = api.client.get(f"/api/v1/workflows/{run_id}/report", headers=headers)
    assert report.status_code == 200
    assert report.text.startswith("<!DOCTYPE html>")
    _assert_shown_inline_and_locked_down(report)
    (stored,) = only_reports
    # The report artifact's own download is the same page, shown the same way.
    _assert_shown_inline_and_locked_down(
        api.client.get(
            f"/api/v1/workflows/{run_id}/artifacts/{stored['id']}/download", headers=headers
        )
    )
    oscal = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": "oscal_poam"}
    )
    assert oscal.status_code == 200 and "plan-of-action-and-milestones" in oscal.json()
    _check_fedramp_refusal(api, headers, run_id)
    pdf = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": "pdf"}
    )
    assert pdf.headers["content-type"] == "application/pdf"
    assert pdf.content.startswith(b"%PDF")
    assert pdf.headers["content-disposition"].startswith("attachment;")
    assert "content-security-policy" not in pdf.headers
    csv = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": "poam_csv"}
    )
    assert (
        csv.headers["content-type"].startswith("text/csv")
        and csv.headers["content-disposition"] == 'attachment; filename="report-v1-poam_csv.csv"'
    )
    for kind in ("json", "poam_xlsx"):
        export = api.client.get(
            f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": kind}
        )
        assert export.headers["content-disposition"].startswith("attachment;"), kind
    docx = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": "docx"}
    )
    assert docx.headers["content-type"] == (
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
    )
    assert docx.headers["content-disposition"] == 'attachment; filename="report-v1-docx.docx"'
    assert docx.content.startswith(b"PK")  # a zip package, as every DOCX
    missing = api.client.get(
        f"/api/v1/workflows/{run_id}/report", headers=headers, params={"format": "odt"}
    )
    assert (missing.status_code, missing.json()["code"]) == (404, "not_found")
    assert "available: html, " in missing.json()["detail"]


def _check_fedramp_refusal(api: Api, headers: Headers, run_id: str) -> None:
    """No SSP link nor system id is set here: asked for FedRAMP, each OSCAL export is
    refused naming the settings to set, over HTTP and in the CLI, and nothing is written."""
    expected = {
        "oscal_poam": ["LIFECYCLE_OSCAL_SSP_HREF", "LIFECYCLE_OSCAL_SYSTEM_ID"],
        "oscal_assessment_plan": ["LIFECYCLE_OSCAL_SSP_HREF"],
        "oscal_assessment_results": ["LIFECYCLE_OSCAL_SSP_HREF"],
    }
    for kind, settings in expected.items():
        refused = api.client.get(
            f"/api/v1/workflows/{run_id}/report",
            headers=headers,
            params={"format": kind, "fedramp": True},
        )
        assert refused.status_code == 409, refused.text
        assert refused.headers["content-type"] == "application/problem+json"
        problem = refused.json()
        assert problem["code"] == "fedramp_settings_missing"
        assert problem["settings"] == settings
        assert all(name in problem["detail"] for name in settings)
    not_oscal = api.client.get(
        f"/api/v1/workflows/{run_id}/report",
        headers=headers,
        params={"format": "pdf", "fedramp": True},
    )
    assert (not_oscal.status_code, not_oscal.json()["code"]) == (422, "invalid_input")
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / "poam.json"
        command = ["report", run_id, "--format", "oscal_poam", "--fedramp", "--output"]
        outcome = CliRunner().invoke(lifecycle, [*command, str(output)])
        assert outcome.exit_code == 1
        assert "fedramp_settings_missing" in outcome.output
        assert "oscal_system_id (LIFECYCLE_OSCAL_SYSTEM_ID)" in outcome.output
        assert not output.exists()
        # Not for FedRAMP, the same export is written as drafted.
        outcome = CliRunner().invoke(lifecycle, command[:-2] + ["--output", str(output)])
        assert outcome.exit_code == 0, outcome.output
        assert "plan-of-action-and-milestones" in json.loads(output.read_text())


def _assert_shown_inline_and_locked_down(response: Any) -> None:
    """The HTML report opens in the browser, and as generated content it may only style
    itself: no script, no requests out, no forms, framed by nothing but this origin."""
    assert response.status_code == 200
    assert response.headers["content-type"] == "text/html; charset=utf-8"
    assert response.headers["content-disposition"].startswith("inline;")
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src" not in policy
    assert "frame-ancestors 'self'" in policy
    assert response.headers["x-content-type-options"] == "nosniff"


def test_cancel_and_resume_wait_for_their_fate(running_api: Api) -> None:
    api = running_api
    owner = api.key("signal", "read", tenant="tenant-cancel")
    operator = api.key("operate", "read", tenant="tenant-cancel", principal="user:ops@acme")
    assessment = api.create_assessment(owner)
    api.upload_samples(owner, assessment["id"])
    run_id = api.start(owner, assessment["id"], "s").json()["id"]
    api.follow(owner, run_id, waiting_at("wait_for_framework_selection", "waiting_for_input"))

    resume = api.client.post(
        f"/api/v1/workflows/{run_id}/resume",
        params={"wait": 10},
        headers=operator,
        json={"reason": "nothing is blocked"},
    )
    assert resume.status_code == 202, resume.text
    assert resume.json()["fate"] in ("ignored", "rejected") and resume.json()["reason"]

    block = api.client.post(
        f"/api/v1/workflows/{run_id}/block",
        params={"wait": 10},
        headers=operator,
        json={"reason": "waiting on legal"},
    )
    assert (block.json()["fate"], block.json()["run"]["status"]) == ("applied", "blocked")
    resume = api.client.post(
        f"/api/v1/workflows/{run_id}/resume",
        params={"wait": 10},
        headers={**operator, "Idempotency-Key": "resume-1"},
        json={"reason": "legal said yes"},
    )
    assert resume.json()["fate"] == "applied"
    assert resume.json()["run"]["status"] == "waiting_for_input"
    blank = api.client.post(
        f"/api/v1/workflows/{run_id}/cancel", headers=operator, json={"reason": "  "}
    )
    assert (blank.status_code, blank.json()["code"]) == (422, "validation_failed")

    cancel = api.client.post(
        f"/api/v1/workflows/{run_id}/cancel",
        params={"wait": 10},
        headers=operator,
        json={"reason": "scope changed"},
    )
    assert cancel.status_code == 202, cancel.text
    assert (cancel.json()["fate"], cancel.json()["run"]["status"]) == ("applied", "cancelled")
    late = select_framework(api, owner, run_id)
    assert late["fate"] == "ignored" and late["run"]["status"] == "cancelled"
    ignored = api.client.get(
        f"/api/v1/workflows/{run_id}/signals", headers=owner, params={"fate": "ignored"}
    ).json()["items"]
    assert late["signal_id"] in {s["signal_id"] for s in ignored}
    audit = api.client.get(
        f"/api/v1/workflows/{run_id}/audit", headers=owner, params={"limit": 200}
    ).json()["items"]
    cancelled = [e for e in audit if e["event_type"] == "lifecycle_workflow_cancelled"]
    assert [(e["actor_id"], e["metadata"]["reason"]) for e in cancelled] == [
        ("user:ops@acme", "scope changed")
    ]
