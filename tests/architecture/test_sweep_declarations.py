"""A sweep's facts are declared once (orchestrator.config.sweep_registry) and its function
registers itself where it lives (`@sweep(name)`); everything that lists sweeps derives
from those: the beat schedule, the Celery tasks, the interval settings, `lifecycle sweep`,
and the health report's pulse. A sweep declared and registered here, in a test, shows up
in each of them; every declared sweep has its function registered in every entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import ValidationError

from orchestrator.config import reference, sweep_registry
from orchestrator.config.settings import reset_settings
from orchestrator.config.sweep_registry import Sweep, declared
from orchestrator.config.sweeps import SweepSettings
from orchestrator.contracts.registry import RegistrationError
from orchestrator.engine.messages import get_app
from orchestrator.engine.routing import QUEUES
from orchestrator.engine.schedule import build_schedule, sweep_intervals, sweep_tasks
from orchestrator.runtime import tasks
from orchestrator.sweeps.pulse import beat_pulse
from tests.support.cli import here

TIDIED: list[str] = []


def tidy() -> int:
    TIDIED.append("tidied")
    return 3


FAKE = Sweep("fake_tidy", 42, "tidy up what a test left")


def test_every_declared_sweep_is_scheduled_registered_and_offered() -> None:
    reset_settings()
    schedule = build_schedule()
    app = get_app()
    names = [sweep.name for sweep in declared()]
    assert len(names) == len(set(names)) and len({s.task for s in declared()}) == len(names)
    for sweep in declared():
        entry = schedule[sweep.entry]
        assert entry["task"] == sweep.task and entry["options"]["queue"] == sweep.queue
        assert sweep.queue in QUEUES
        assert entry["schedule"] == sweep.interval_s
        assert app.tasks[sweep.task].send_events is False
        assert callable(sweep.function())
    assert set(schedule) == {sweep.entry for sweep in declared()}
    assert sweep_tasks() == {sweep.task for sweep in declared()}


def test_every_declared_sweep_has_its_function_registered() -> None:
    assert set(sweep_registry.RUNS) == {sweep.name for sweep in declared()}
    # The worker's entry point registers them in a fresh process too.
    done = subprocess.run(
        [sys.executable, "-c", WORKER],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == sorted(sweep.name for sweep in declared())


WORKER = """
from orchestrator.config.settings import Settings
from orchestrator.config.sweep_registry import RUNS
from orchestrator.engine.celery_app import create_app
create_app(Settings(broker_url="memory://localhost/")).loader.import_default_modules()
print(" ".join(sorted(RUNS)))
"""


def test_a_sweep_function_is_refused_twice_and_for_an_undeclared_name() -> None:
    with pytest.raises(RegistrationError, match="registered twice"):
        sweep_registry.sweep("outbox")(tidy)
    with pytest.raises(RegistrationError, match="nothing declares"):
        sweep_registry.sweep("nightly")(tidy)
    with pytest.raises(RegistrationError, match="no sweep function is registered"):
        Sweep("nightly", 60, "nothing").function()


@pytest.fixture
def declared_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[Sweep]:
    monkeypatch.setattr(sweep_registry, "SWEEPS", (*sweep_registry.SWEEPS, FAKE))
    sweep_registry.sweep(FAKE.name)(tidy)
    reset_settings()
    yield FAKE
    sweep_registry.RUNS.remove(FAKE.name)
    tasks.SWEEP_TASK_BY_NAME.pop(FAKE.name, None)
    get_app().tasks.pop(FAKE.task, None)
    monkeypatch.undo()
    reset_settings()


def test_a_new_sweep_is_one_declaration_and_its_function(
    declared_fake: Sweep, embedded: Path
) -> None:
    entry = build_schedule()["sweep-fake-tidy"]
    assert entry["task"] == "orchestrator.sweep_fake_tidy" and entry["schedule"] == 42
    assert sweep_intervals()["orchestrator.sweep_fake_tidy"] == 42
    assert SweepSettings(intervals={"fake_tidy": 5}).interval("fake_tidy") == 5

    task = tasks.register_sweep_tasks()["fake_tidy"]
    assert get_app().tasks["orchestrator.sweep_fake_tidy"].name == task.name
    TIDIED.clear()
    task.apply()  # as a worker runs what beat sends
    assert TIDIED == ["tidied"]

    result = here("sweep", "fake-tidy")
    assert result.exit_code == 0, result.output
    assert "fake-tidy" in result.output and "3 handled" in result.output
    [pulse] = [s for s in beat_pulse().sweeps if s.task == "orchestrator.sweep_fake_tidy"]
    assert (pulse.every_s, pulse.runs, pulse.last_error) == (42, 1, None)


def test_an_interval_for_no_declared_sweep_is_refused() -> None:
    with pytest.raises(ValidationError, match="no sweep named nightly"):
        SweepSettings(intervals={"nightly": 60})


def test_the_configuration_page_is_what_the_settings_write() -> None:
    page = reference.PAGE.read_text()
    assert reference.written(page) == page, (
        "docs/configuration.md is stale: python -m orchestrator.config.reference --write"
    )
    assert all(f"`{sweep.name}`" in page for sweep in declared())


def test_every_sweep_task_returns_a_plain_value(embedded: Path) -> None:
    """What a sweep's task returns is logged by the worker and read as JSON by any result
    backend and by the fault tests that parse the log: never a Python object's repr."""
    # An eager result is read, never waited on: an in-process worker earlier in the session
    # leaves Celery's "inside a worker" flag set, where .get() refuses.
    for name, task in tasks.register_sweep_tasks().items():
        applied = task.apply()
        assert applied.successful(), (name, applied.traceback)
        assert json.loads(json.dumps(applied.result)) == applied.result, name
    assert tasks.SWEEP_TASK_BY_NAME["messages"].apply().result == {"checked": 0, "resent": 0}
