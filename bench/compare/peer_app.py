"""The peer: the lifecycle's shape as a DBOS Transact workflow on PostgreSQL.

One workflow per assessment: the 20 steps in the lifecycle's order; the 7 waits (documents,
framework, five approvals) announce themselves with `DBOS.set_event("waiting:<step>")`
and block in `DBOS.recv(topic=<step>)` until the driver's `send`; every other step is a
`@DBOS.step` that returns at once (like the fleet's instant jobs) and is checkpointed.

With `--fair`, every step (a wait once answered) is instead one application transaction
that writes what the fleet writes per applied signal (bench.compare.peer_writes).

`python -m bench.compare.peer_app --url URL --executor-id ID --worker-concurrency K` runs one
worker process: it launches DBOS, registers the queue and runs what it dequeues until
SIGTERM. SQL counting (bench.compare.sqlcount) is on when the environment asks for it.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dbos import DBOS, DBOSConfig, SQLAlchemyDatasource

from bench.compare import sqlcount
from bench.compare.peer_writes import Write, make_writes
from orchestrator.contracts.steps import STEP_ORDER, StepKind
from orchestrator.lifecycle.definition import STEP_SPECS

WORKFLOW_NAME = "bench_lifecycle"
QUEUE_NAME = "bench_lifecycles"
APP_NAME = "bench-peer"
APP_VERSION = "bench"
WAIT_EVENT = "waiting:"
WAIT_KINDS = (StepKind.WAIT_FOR_INPUT, StepKind.WAIT_FOR_APPROVAL)

#: (step name, waits for a message?) in the lifecycle's order: 20 steps, 7 waits.
SHAPE: tuple[tuple[str, bool], ...] = tuple(
    (step.value, STEP_SPECS[step].kind in WAIT_KINDS) for step in STEP_ORDER
)


def _make_step(name: str) -> Callable[[int], dict[str, Any]]:
    def run(lifecycle: int) -> dict[str, Any]:
        return {"step": name, "lifecycle": lifecycle, "instant": True}

    run.__name__ = run.__qualname__ = f"step_{name}"
    return DBOS.step(name=name)(run)


STEPS = {name: _make_step(name) for name, waits in SHAPE if not waits}
#: The fair peer's transactions, one per step; None for the bare peer.
WRITES: dict[str, Write] | None = None


@DBOS.workflow(name=WORKFLOW_NAME)
def lifecycle(index: int) -> int:
    run_id = DBOS.workflow_id
    assert run_id is not None
    for version, (name, waits) in enumerate(SHAPE):
        if waits:
            DBOS.set_event(WAIT_EVENT + name, True)
            if DBOS.recv(topic=name, timeout_seconds=600) is None:
                raise TimeoutError(f"lifecycle {index}: no message for {name}")
        if WRITES is not None:
            WRITES[name](run_id, version)
        elif not waits:
            STEPS[name](index)
    return index


def config(url: str, executor_id: str) -> DBOSConfig:
    return {
        "name": APP_NAME,
        "system_database_url": url,
        "executor_id": executor_id,
        "application_version": APP_VERSION,
        "log_level": "WARNING",
        "run_migrations": False,
    }


def serve(
    url: str,
    executor_id: str,
    worker_concurrency: int,
    poll_s: float,
    ready_file: Path,
    fair: bool = False,
) -> None:
    global WRITES
    sqlcount.install_if_enabled()
    if fair:
        # The tables and the datasource's own are made by the driver before workers start.
        datasource = SQLAlchemyDatasource.create(
            url,
            engine_kwargs={"pool_size": worker_concurrency, "max_overflow": 2},
            run_migrations=False,
        )
        WRITES = make_writes(datasource)
    DBOS(config=config(url, executor_id))
    DBOS.launch()
    DBOS.register_queue(
        QUEUE_NAME,
        worker_concurrency=worker_concurrency,
        polling_interval_sec=poll_s,
        on_conflict="always_update",
    )
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    ready_file.write_text("ready")
    while not stop.wait(0.5):
        pass
    DBOS.destroy()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="one DBOS worker process of the peer")
    parser.add_argument("--url", required=True)
    parser.add_argument("--executor-id", required=True)
    parser.add_argument("--worker-concurrency", type=int, required=True)
    parser.add_argument("--poll-s", type=float, default=0.05)
    parser.add_argument("--ready-file", type=Path, required=True)
    parser.add_argument(
        "--fair", action="store_true", help="each step writes what the fleet writes"
    )
    args = parser.parse_args(argv)
    serve(
        args.url,
        args.executor_id,
        args.worker_concurrency,
        args.poll_s,
        args.ready_file,
        fair=args.fair,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
