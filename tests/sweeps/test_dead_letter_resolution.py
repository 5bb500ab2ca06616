"""A dead letter is resolved when its step later succeeds, or by an operator by hand."""

from __future__ import annotations

import uuid

import pytest

from orchestrator.config.settings import reset_settings
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.identity import Actor
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.dead_letters import (
    DeadLetterView,
    list_dead_letters,
    replay_dead_letter,
    resolve_dead_letter,
)
from orchestrator.service.operations import retry_step
from orchestrator.service.producer import get_run
from orchestrator.sweeps import recover_lost_jobs
from orchestrator.sweeps.lost_jobs import LostJobs
from tests.support.cli import here, here_json
from tests.support.sweeps import (
    Clock,
    job,
    new_tenant,
    no_kick,
    run_queued_jobs,
    run_until_job_queued,
)


@pytest.fixture
def give_up_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LIFECYCLE_SWEEP_REDISPATCH_LIMIT", "0")
    reset_settings()


def _dead_lettered_run(owner: Actor, clock: Clock) -> tuple[uuid.UUID, DeadLetterView]:
    run_id, job_id = run_until_job_queued(owner)
    clock.advance(hours=1, seconds=1)
    assert recover_lost_jobs() == LostJobs(0, 1)
    coordinate(run_id)
    assert get_run(owner, run_id).status == "failed"
    [letter] = list_dead_letters(run_id=run_id)
    assert letter.job_id == job_id and letter.pending
    return run_id, letter


def test_a_retry_that_succeeds_resolves_the_dead_letter(
    clock: Clock, give_up_at_once: None
) -> None:
    owner, _ = new_tenant()
    run_id, letter = _dead_lettered_run(owner, clock)

    retry_step(
        owner, run_id, reason="ingestion worker is back", idempotency_key="retry-1", kick=no_kick
    )
    coordinate(run_id)
    assert run_queued_jobs(run_id) == 1
    assert job(f"{run_id}:ingest_documents:2").status == "succeeded"

    assert list_dead_letters(run_id=run_id) == []
    [resolved] = list_dead_letters(run_id=run_id, include_replayed=True)
    assert resolved.id == letter.id and resolved.resolved_at is not None
    assert resolved.resolved_by == "system:orchestrator"
    assert resolved.resolution == f"step succeeded: job {run_id}:ingest_documents:2"
    with pytest.raises(InvalidInput, match="was resolved at .* step succeeded"):
        replay_dead_letter(letter.id, actor_id="operator:ana", reason="again")


def test_an_operator_resolves_a_dead_letter_by_hand(clock: Clock, give_up_at_once: None) -> None:
    owner, _ = new_tenant()
    run_id, letter = _dead_lettered_run(owner, clock)
    with pytest.raises(InvalidInput, match="needs a reason"):
        resolve_dead_letter(letter.id, actor_id="operator:ana", reason="  ")

    resolved = here_json(
        "dead-letters",
        "resolve",
        str(letter.id),
        "--reason",
        "the assessment was redone by hand",
        "--actor",
        "operator:ana",
    )

    assert (resolved["resolved_by"], resolved["resolution"]) == (
        "operator:ana",
        "the assessment was redone by hand",
    )
    assert here_json("dead-letters", "list", "--run", str(run_id))["items"] == []
    [listed] = here_json("dead-letters", "list", "--run", str(run_id), "--all")["items"]
    assert listed["resolved_at"] is not None
    twice = here("dead-letters", "resolve", str(letter.id), "--reason", "again")
    assert twice.exit_code == 1 and "was resolved at" in twice.output
    refused = here("dead-letters", "replay", str(letter.id), "--reason", "replay it")
    assert refused.exit_code == 1 and "was resolved at" in refused.output
    assert get_run(owner, run_id).status == "failed", "resolving a letter changes no run"
