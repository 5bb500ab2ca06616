"""Sweeps leave no trace in Flower: neither a task-sent event when published (as beat
does) nor worker events; every other message announces itself under its shadow name."""

from __future__ import annotations

from orchestrator.engine.messages import get_app
from orchestrator.engine.schedule import BEAT_SCHEDULE, sweep_tasks
from orchestrator.runtime import tasks as _tasks  # noqa: F401 (registers the sweeps)


def test_every_scheduled_sweep_sends_no_events() -> None:
    app = get_app()
    scheduled = {entry["task"] for entry in BEAT_SCHEDULE.values()}
    assert scheduled == sweep_tasks()
    for name in sweep_tasks():
        assert app.tasks[name].send_events is False, name
        message = app.amqp.create_task_message(f"id-{name}", name, [], {}, create_sent_event=True)
        assert message.sent_event is None, name


def test_a_job_message_announces_itself_under_its_step() -> None:
    assert get_app().conf.task_send_sent_event is True
    message = get_app().amqp.create_task_message(
        "run:create_scope:1",
        "analysis.run_step",
        [{}],
        {},
        create_sent_event=True,
        shadow="analysis.run_step[create_scope]",
    )
    assert message.sent_event["name"] == "analysis.run_step[create_scope]"
