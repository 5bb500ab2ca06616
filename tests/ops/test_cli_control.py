"""The celery CLI's run controls, listings, API keys and argument errors on a real run."""

from __future__ import annotations

import uuid

import pytest

from orchestrator.service.apikeys import authenticate
from orchestrator.service.producer import get_run
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import cli, cli_json, here, here_json
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import wait_for


@pytest.mark.broker_matrix
def test_block_resume_and_cancel_a_waiting_run_and_find_it_by_status(fleet: Fleet) -> None:
    fleet.start("orchestrator")
    owner, _ = new_tenant()
    run = start_assessment(owner, documents=0)
    wait_for(
        lambda: get_run(owner, run.id).status == "waiting_for_input", what="the documents wait"
    )

    blocked = cli_json("block", str(run.id), "--reason", "evidence owner on leave")
    assert blocked["fate"] == "applied" and blocked["run"]["status"] == "blocked"
    mine = here_json("list", "--tenant", owner.tenant_id, "--status", "blocked")["items"]
    assert [r["id"] for r in mine] == [str(run.id)]
    assert here_json("list", "--tenant", owner.tenant_id, "--status", "running")["items"] == []
    assert str(run.id) in here("list", "--status", "blocked").stdout, "across tenants too"

    resumed = cli_json("resume", str(run.id), "--reason", "owner is back")
    assert resumed["fate"] == "applied"
    assert (resumed["run"]["status"], resumed["run"]["current_step"]) == (
        "waiting_for_input",
        "wait_for_documents",
    )
    cancelled = cli("cancel", str(run.id), "--reason", "duplicate assessment")
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"cancel of run {run.id}: applied" in cancelled.stdout
    assert get_run(owner, run.id).status == "cancelled"
    again = here("cancel", str(run.id), "--reason", "twice")
    assert again.exit_code == 1 and "cancelled" in again.output


@pytest.mark.broker_matrix
def test_api_keys_are_created_and_revoked_from_the_cli(fleet: Fleet) -> None:
    owner, _ = new_tenant()
    created = cli_json(
        "apikey",
        "create",
        "--tenant",
        owner.tenant_id,
        "--principal",
        "user:ci@example.org",
        "--scope",
        "read,signal",
        "--name",
        "ci",
    )
    principal = authenticate(created["key"])
    assert principal is not None and principal.tenant_id == owner.tenant_id
    assert sorted(s.value for s in principal.scopes) == ["read", "signal"]

    revoked = cli("apikey", "revoke", created["key_id"])

    assert revoked.returncode == 0 and f"revoked {created['key_id']}" in revoked.stdout
    assert authenticate(created["key"]) is None
    [listed] = here_json("apikey", "list", "--tenant", owner.tenant_id)["items"]
    assert listed["key_id"] == created["key_id"] and listed["revoked_at"] is not None
    assert "key" not in listed, "a listing never shows the key"
    bad = here(
        "apikey",
        "create",
        "--tenant",
        owner.tenant_id,
        "--principal",
        "user:x",
        "--scope",
        "everything",
    )
    assert bad.exit_code == 1 and "unknown scope 'everything'" in bad.output


@pytest.mark.broker_matrix
def test_wrong_arguments_get_a_clear_message_and_a_non_zero_exit(fleet: Fleet) -> None:
    unknown = cli("retry", str(uuid.uuid4()), "--reason", "try")
    assert unknown.returncode == 1 and "not_found: workflow run" in unknown.stderr
    missing = here("retry", str(uuid.uuid4()))
    assert missing.exit_code == 2 and "Missing option '--reason'" in missing.output
    step = here("reprocess", str(uuid.uuid4()), "no_such_step", "--reason", "r")
    assert step.exit_code == 2 and "'no_such_step' is not one of" in step.output
    run_id = here("show", "run-42")
    assert run_id.exit_code == 2 and "'run-42' is not a run id" in run_id.output
    sweep = here("sweep", "everything")
    assert sweep.exit_code == 2 and "is not one of" in sweep.output
    paging = here("list", "--cursor", "abc")
    assert paging.exit_code == 2 and "give --tenant too" in paging.output
