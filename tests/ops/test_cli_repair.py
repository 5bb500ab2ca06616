"""The celery CLI repairs real runs: retry a failed step, replay a dead letter, reprocess
a step (dry run, then for real). Real PostgreSQL, Redis and worker processes; the CLI
runs as `python -m celery -A orchestrator lifecycle ...`."""

from __future__ import annotations

import pytest

from orchestrator.service.approval_events import record_approval
from orchestrator.service.producer import get_run, send_signal
from orchestrator.service.queries import list_artifacts, list_audit
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.cli import (
    add_consumer,
    cli_json,
    here,
    here_json,
    job_status,
    run_with_dead_lettered_ingestion,
    step_attempts,
)
from tests.support.fleet_runs import new_tenant, start_assessment
from tests.support.polling import wait_for
from tests.support.services import SMALL_FRAMEWORK

#: Every queue a run needs up to the SoA approval, but ingestion: added when "it is back".
WITHOUT_INGESTION = "orchestrator,kb_index,analysis"


@pytest.mark.broker_matrix
def test_retry_runs_the_failed_step_again_as_a_new_attempt(fleet: Fleet) -> None:
    worker = fleet.start(WITHOUT_INGESTION)
    owner, _ = new_tenant()
    run, _ = run_with_dead_lettered_ingestion(owner)
    assert run.current_step == "ingest_documents" and run.reason
    shown = here("show", str(run.id)).stdout
    assert "status     failed at ingest_documents" in shown
    assert "DEAD_LETTER" in shown and "job_lost" in shown

    add_consumer("ingestion", worker)
    done = cli_json(
        "retry",
        str(run.id),
        "--reason",
        "ingestion worker is back",
        "--actor",
        "operator:ana",
        "--key",
        "retry-ingestion-1",
    )

    assert done["fate"] == "applied" and done["idempotency_key"] == "retry-ingestion-1"
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the run to get past ingestion",
    )
    assert step_attempts(run.id, "ingest_documents") == [(1, "failed"), (2, "completed")]
    assert job_status(f"{run.id}:ingest_documents:2") == "succeeded"
    retried = [
        e
        for e in list_audit(owner, run.id, limit=200).items
        if e.event_type == "lifecycle_workflow_step_retried"
    ]
    assert [(e.actor_id, e.metadata["reason"]) for e in retried] == [
        ("operator:ana", "ingestion worker is back")
    ]
    again = here("retry", str(run.id), "--reason", "once more")
    assert again.exit_code == 1
    assert "only a failed run can be retried" in again.output


@pytest.mark.broker_matrix
def test_a_dead_letter_is_listed_and_replayed_once(fleet: Fleet) -> None:
    worker = fleet.start(WITHOUT_INGESTION)
    owner, _ = new_tenant()
    run, letter = run_with_dead_lettered_ingestion(owner)
    listed = here("dead-letters", "list", "--tenant", owner.tenant_id).stdout
    assert letter["job_id"] in listed
    # The whole reason, without the job id the row shows already.
    assert (
        "lost: no worker consumes queue 'ingestion' (no outcome or heartbeat within 0.001 s, "
        "0 re-dispatch(es))"
    ) in listed

    add_consumer("ingestion", worker)
    replay = cli_json("dead-letters", "replay", str(letter["id"]), "--reason", "worker restored")

    assert replay["fate"] == "applied"
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the replayed step to finish",
    )
    assert step_attempts(run.id, "ingest_documents") == [(1, "failed"), (2, "completed")]
    assert here_json("dead-letters", "list", "--run", str(run.id))["items"] == []
    [replayed] = here_json("dead-letters", "list", "--run", str(run.id), "--all")["items"]
    assert replayed["replayed_at"] is not None
    twice = here("dead-letters", "replay", str(letter["id"]), "--reason", "again")
    assert twice.exit_code == 1 and "was replayed at" in twice.output


@pytest.mark.broker_matrix
def test_reprocess_dry_run_changes_nothing_then_reprocessing_rewinds(fleet: Fleet) -> None:
    fleet.start(WITHOUT_INGESTION.replace("orchestrator", "orchestrator,ingestion"))
    owner, reviewer = new_tenant()
    run = _at_soa_approval_with_scope_approved(owner, reviewer)
    before = get_run(owner, run)

    refused = here("reprocess", str(run), "create_scope", "--dry-run", "--reason", "fix")
    assert refused.exit_code == 1 and "new-version flag" in refused.output
    plan = here_json(
        "reprocess",
        str(run),
        "create_scope",
        "--dry-run",
        "--new-version",
        "--reason",
        "scope missed a site",
    )
    assert plan["superseded_steps"] == ["create_scope", "create_soa_draft", "wait_for_soa_approval"]
    assert sorted((a["kind"], a["version"]) for a in plan["superseded_artifacts"]) == [
        ("scope", 1),
        ("soa", 1),
    ]
    assert plan["approvals_to_collect_again"] == ["scope"]
    text = here(
        "reprocess",
        str(run),
        "create_scope",
        "--dry-run",
        "--new-version",
        "--reason",
        "scope missed a site",
    )
    assert "collect approvals again: scope" in text.stdout
    assert get_run(owner, run).version == before.version, "a dry run changes nothing"

    done = cli_json(
        "reprocess",
        str(run),
        "create_scope",
        "--new-version",
        "--reason",
        "scope missed a site",
        "--key",
        "reprocess-scope-1",
    )

    assert done["fate"] == "applied"
    wait_for(
        lambda: (
            get_run(owner, run).context["artifacts"].get("soa") == 2
            and get_run(owner, run).status == "waiting_for_approval"
        ),
        what="the SoA v2 waiting for approval",
    )
    after = get_run(owner, run)
    assert after.current_step == "wait_for_soa_approval"
    assert "scope" not in after.context["approved"], "the scope approval is collected again"
    assert step_attempts(run, "create_scope") == [(1, "superseded"), (2, "completed")]
    versions = {(a.kind, a.version): a.status for a in list_artifacts(owner, run)}
    assert versions[("scope", 1)] == "superseded" and versions[("soa", 1)] == "superseded"
    assert ("scope", 2) in versions and ("soa", 2) in versions


def _at_soa_approval_with_scope_approved(owner, reviewer):  # type: ignore[no-untyped-def]
    run = start_assessment(owner, documents=1)
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_framework_selection",
        what="the framework wait",
    )
    send_signal(
        reviewer, run.id, "framework_selected", "framework", payload={"framework": SMALL_FRAMEWORK}
    )
    wait_for(
        lambda: get_run(owner, run.id).current_step == "wait_for_soa_approval", what="the SoA wait"
    )
    event = record_approval(reviewer, run.id, "scope", 1)
    send_signal(reviewer, run.id, "scope_approved", "scope-v1", approval_event_id=event.id)
    wait_for(
        lambda: "scope" in get_run(owner, run.id).context["approved"], what="the scope approval"
    )
    return run.id
