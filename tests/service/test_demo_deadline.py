"""A slow run keeps going while it progresses; a run that stops moving ends the demo with a
sentence and the commands that continue, never a traceback. Time is a fake clock that the
reviewer's own pauses advance: nothing here waits."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from orchestrator.cli.group import lifecycle
from orchestrator.demo import run as demo_run
from orchestrator.demo.progress import ProgressLines
from orchestrator.demo.reviewer import RunStalled, ScriptedReviewer, drive
from orchestrator.service.producer import Actor
from orchestrator.service.read_models import RunView
from tests.support.run_views import run_view

ACTOR = Actor(tenant_id="t", actor_id="user:reviewer")
RUN = uuid.uuid4()


class FakeTime:
    def __init__(self) -> None:
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds * 1000  # each pause stands for a long wait on a busy machine


def _run(status: str, step: str | None) -> RunView:
    return run_view(status, step, run_id=RUN)


def test_a_slow_run_that_progresses_is_never_cut_off() -> None:
    time = FakeTime()
    lines: list[str] = []

    def read(_actor: Actor, _run_id: uuid.UUID) -> RunView:
        # One long step: an hour of fake time, its batches done one every few minutes.
        if time.now < 3600:
            return _run("running", "create_soa_draft")
        return _run("completed", None)

    def progress(_run_id: uuid.UUID) -> Any:
        return (("create_soa_draft", int(time.now // 200), 18),)

    final = drive(
        ScriptedReviewer(ACTOR),
        RUN,
        timeout_s=60,
        stall_s=300,
        progress=progress,
        on_progress=ProgressLines(lines.append, time.clock),
        read=read,
        clock=time.clock,
        sleep=time.sleep,
    )
    assert final.status == "completed" and time.now >= 3600
    assert any("batches done, about" in line and "s left" in line for line in lines), lines


def test_a_run_that_stops_moving_ends_with_a_sentence_naming_where() -> None:
    time = FakeTime()
    with pytest.raises(RunStalled) as stalled:
        drive(
            ScriptedReviewer(ACTOR),
            RUN,
            stall_s=300,
            progress=lambda _run_id: (("create_soa_draft", 3, 18),),
            read=lambda _a, _r: _run("running", "create_soa_draft"),
            clock=time.clock,
            sleep=time.sleep,
        )
    assert 300 <= time.now < 400  # the last progress was at the start
    assert str(stalled.value) == (
        f"run {RUN} has not moved for 300 s (running at create_soa_draft): no step finished "
        "and no batch of its work was done in that time"
    )


def test_without_a_stall_limit_the_whole_timeout_counts_as_before() -> None:
    time = FakeTime()
    with pytest.raises(TimeoutError):
        drive(
            ScriptedReviewer(ACTOR),
            RUN,
            timeout_s=120,
            read=lambda _a, _r: _run("running", "index_kb"),
            clock=time.clock,
            sleep=time.sleep,
        )
    assert 120 <= time.now < 200


def test_the_demo_command_prints_what_to_do_not_a_traceback(
    embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def stalls(**_kwargs: object) -> None:
        raise RunStalled(RUN, ("running", "create_soa_draft"), 300)

    monkeypatch.setattr(demo_run, "run_demo", stalls)
    result = CliRunner().invoke(lifecycle, ["demo"])
    assert result.exit_code == 1
    assert "has not moved for 300 s (running at create_soa_draft)" in result.output
    assert f"lifecycle show {RUN}" in result.output and "lifecycle api" in result.output
    assert (
        "Traceback" not in result.output
        and result.exception is None
        or isinstance(result.exception, SystemExit)
    )
