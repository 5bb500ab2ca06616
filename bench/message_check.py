"""What the message check costs the broker with a queue 10,000 deep.

A Redis queue is filled with N job messages (as `send_job` sends them, nothing consumes
them). Then the broker side of the message check is timed, as the sweep uses it:

- a backlog: the oldest `message_check_batch` queued jobs are all present (the common
  case; the search stops at the last one found);
- a loss: that many ids are missing (the search reads the whole queue);
- the queue depth and the oldest message's age, as /metrics reads them.

Each is repeated and its median printed, with how many messages were found; nothing is
sent again in the backlog case (the printed "present" equals the batch).

    python -m bench.message_check --broker-url redis://127.0.0.1:6379/14 --depth 10000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import TypeVar

import redis

from bench.record import add_record_flag, record_if_asked
from orchestrator.config.settings import Settings
from orchestrator.engine.celery_app import create_app
from orchestrator.observability.broker_view import BrokerView

QUEUE = "ingestion"
TASK = "ingestion.ingest_documents"


T = TypeVar("T")


def _median_ms(action: Callable[[], T], repeat: int) -> tuple[float, T]:
    timings = []
    for _ in range(repeat):
        began = time.perf_counter()
        result = action()
        timings.append((time.perf_counter() - began) * 1000)
    return statistics.median(timings), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/14")
    parser.add_argument("--depth", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    add_record_flag(parser)
    args = parser.parse_args()

    client = redis.Redis.from_url(args.broker_url)
    client.flushdb()
    app = create_app(Settings(broker_url=args.broker_url))
    body = {"step": "ingest_documents", "job_id": "", "padding": "x" * 600}
    with app.producer_or_acquire() as producer:
        for index in range(args.depth):
            app.send_task(
                TASK,
                args=[{**body, "job_id": f"job-{index}"}],
                queue=QUEUE,
                task_id=f"job-{index}",
                producer=producer,
                headers={"lifecycle_sent_at": time.time()},
            )
    batch = Settings().sweeps.message_check_batch
    view = BrokerView(app)
    oldest = [f"job-{index}" for index in range(min(batch, args.depth))]
    lost = [f"lost-{index}" for index in range(batch)]

    backlog_ms, present = _median_ms(lambda: view.present(QUEUE, oldest), args.repeat)
    loss_ms, found = _median_ms(lambda: view.present(QUEUE, lost), args.repeat)
    depth_ms, depth = _median_ms(lambda: view.depth(QUEUE), args.repeat)
    print(f"queue depth {client.llen(QUEUE)}, message check batch {batch}")
    print(
        f"backlog: {backlog_ms:.1f} ms median to find the {len(oldest)} oldest "
        f"(present {len(present or ())}: nothing to send again)"
    )
    print(f"loss: {loss_ms:.1f} ms median to read the whole queue (found {len(found or ())})")
    print(f"depth and oldest age: {depth_ms:.2f} ms median ({depth})")
    record_if_asked(
        args,
        "message_check",
        [
            (f"finding the {len(oldest):,} oldest of {args.depth:,} queued jobs", backlog_ms, "ms"),
            (f"reading the whole queue for {batch:,} missing ids", loss_ms, "ms"),
            ("depth and oldest message's age", depth_ms, "ms"),
        ],
    )
    client.flushdb()


if __name__ == "__main__":
    main()
