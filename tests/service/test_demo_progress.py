"""The demo's progress through a step's batches: on a terminal a bar for each job that fans
out, with its batches done of all and the time left at the pace so far; to a file or a
pipe, plain lines. Time is a fake clock and the batches are given: nothing here waits."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner
from rich.console import Console

from orchestrator.cli import output
from orchestrator.cli.group import lifecycle
from orchestrator.demo import run as demo_run
from orchestrator.demo.progress import ProgressBars, ProgressLines
from tests.support.run_views import run_view


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def terminal() -> tuple[Console, io.StringIO]:
    screen = io.StringIO()
    return Console(file=screen, force_terminal=True, width=120, color_system=None), screen


def frames(screen: io.StringIO, since: int = 0) -> str:
    """What was drawn, without the cursor movements between redraws."""
    return click.unstyle(screen.getvalue()[since:])


def test_a_bar_shows_batches_done_of_all_and_the_time_left() -> None:
    console, screen = terminal()
    clock = Clock()
    bars = ProgressBars(console, clock, auto_refresh=False)
    bars((("create_soa_draft", 0, 18),))
    assert "0/18 batches, time left -:--:--" in frames(screen), "no pace yet"
    clock.now = 100.0
    bars((("create_soa_draft", 2, 18),))
    clock.now = 200.0
    bars((("create_soa_draft", 4, 18),))
    # 2 batches in the last 100 s: 14 more take 700 s.
    drawn = frames(screen)
    assert re.search(r"create_soa_draft .* 4/18 batches, time left 0:11:40", drawn), drawn
    clock.now = 900.0
    console.out("reviewer approved scope v1")  # a line of the demo's, printed meanwhile
    bars((("create_soa_draft", 18, 18),))
    drawn = frames(screen)
    assert "reviewer approved scope v1" in drawn
    assert re.search(r"create_soa_draft .* 18/18 batches, took 0:15:00", drawn), drawn


def test_the_same_numbers_draw_nothing_and_a_later_job_gets_its_own_bars() -> None:
    console, screen = terminal()
    clock = Clock()
    bars = ProgressBars(console, clock, auto_refresh=False)
    bars((("index_kb", 3, 3),))  # done when first seen: drawn once, then left
    once = len(screen.getvalue())
    bars((("index_kb", 3, 3),))
    assert len(screen.getvalue()) == once
    clock.now = 50.0
    # The batches of every job of the run come each time: the finished one stays as drawn.
    bars((("index_kb", 3, 3), ("analyze_evidence", 1, 10), ("analyze_evidence", 0, 0)))
    later = frames(screen, once)
    assert "1/10 batches" in later and "index_kb" not in later
    bars((("index_kb", 3, 3), ("analyze_evidence", 2, 10), ("analyze_evidence", 1, 4)))
    later = frames(screen, once)
    assert "2/10 batches" in later and re.search(r"1/4 +batches", later), later
    bars.close()
    bars.close()  # closing twice is closing once


def test_plain_lines_say_done_of_all_and_the_seconds_left() -> None:
    lines: list[str] = []
    clock = Clock()
    say = ProgressLines(lines.append, clock)
    say((("create_soa_draft", 2, 18),))
    clock.now = 100.0
    say((("create_soa_draft", 4, 18),))
    clock.now = 800.0
    say((("create_soa_draft", 18, 18),))
    # The next job's batches: the one done before is not said again.
    say((("create_soa_draft", 18, 18), ("ingest_soa", 0, 8)))
    clock.now = 810.0
    say((("create_soa_draft", 18, 18), ("ingest_soa", 2, 8)))
    assert lines == [
        "    create_soa_draft: 4 of 18 batches done, about 700 s left",
        "    create_soa_draft: 18 of 18 batches done",
        "    ingest_soa: 2 of 8 batches done, about 30 s left",
    ]


def _finished() -> demo_run.DemoResult:
    run = run_view("completed", None, completed=True)
    return demo_run.DemoResult(
        run=run,
        steps=[("ingest_documents", 0.085), ("create_soa_draft", 185.0)],
        report_path="/tmp/report.html",
        seconds=250.0,
    )


@pytest.mark.parametrize("on_a_terminal", [False, True])
def test_the_demo_command_draws_bars_only_on_a_terminal(
    on_a_terminal: bool, embedded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    given: dict[str, Any] = {}

    def finished(**kwargs: Any) -> demo_run.DemoResult:
        given.update(kwargs)
        kwargs["say"]("lifecycle run started")
        return _finished()

    monkeypatch.setattr(demo_run, "run_demo", finished)
    if on_a_terminal:
        monkeypatch.setattr(output, "is_terminal", lambda _stream: True)
    result = CliRunner().invoke(lifecycle, ["demo"])
    assert result.exit_code == 0, result.output
    if on_a_terminal:
        assert isinstance(given["on_progress"], ProgressBars)
    else:  # the demo's own plain lines, as through a pipe
        assert given["on_progress"] is None
    shown = click.unstyle(result.stdout)
    assert "lifecycle run started" in shown
    assert "completed in 4 minutes and 10 seconds" in shown
    steps = [line.split(None, 1) for line in shown.splitlines() if "_" in line[:20]]
    assert steps[-2:] == [
        ["ingest_documents", "85 milliseconds"],
        ["create_soa_draft", "3 minutes and 5 seconds"],
    ]
