"""People using the embedded default while its jobs run: how long they wait.

The demo lifecycle runs on a fresh SQLite home with the in-process worker. Meanwhile a
console user, over HTTP (FastAPI's test client, the real app), reads the demo run's page
and the Python API reads the run every 0.2 s; and during every job of the demo run the
console user approves the SoA of one of several side runs prepared beforehand (each
approval starts that run's next jobs, so they contend too). Every write transaction of
the process is timed from BEGIN to COMMIT/ROLLBACK with SQLAlchemy events. Printed:

- the longest write transaction, and which statement opened it;
- the longest wait for a read (console page, Python API) and for a decision;
- how many requests failed, and how many with "database is locked".

Targets: at most 1 s for each, and 0 errors.

    python -m bench.embedded_contention            # LIFECYCLE_EMBEDDER unset: MiniLM
    LIFECYCLE_EMBEDDER=hashing python -m bench.embedded_contention
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import event

from bench.record import add_record_flag, record_if_asked
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind
from orchestrator.db.migrate import upgrade
from orchestrator.db.session import get_engine, is_read_only
from orchestrator.demo.reviewer import ScriptedReviewer
from orchestrator.demo.run import OWNER, REVIEWER, SAMPLES, run_demo
from orchestrator.engine.messages import get_app
from orchestrator.lifecycle.definition import STEP_SPECS
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.apikeys import create_key
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import create_assessment, get_run, start_lifecycle
from orchestrator.service.queries import list_runs
from orchestrator.service.roles import grant_role
from orchestrator.testing.reset import reset_process_state

CONSOLE_USER = "user:console@example.org"
JOB_STEPS = {step.value for step, spec in STEP_SPECS.items() if spec.kind is StepKind.JOB}
LOCKED = "database is locked"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


@dataclass
class Figures:
    writes: list[tuple[float, str]] = field(default_factory=list)
    reads: list[float] = field(default_factory=list)
    decisions: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock = threading.Lock()

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def instrument(figures: Figures) -> None:
    """Time every write transaction: BEGIN (IMMEDIATE) to COMMIT or ROLLBACK."""
    engine = get_engine()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        if not is_read_only(connection):
            connection.info["bench_began"] = time.perf_counter()

    @event.listens_for(engine, "before_cursor_execute")
    def _first(connection: Any, _c: Any, statement: str, *_: Any) -> None:
        if "bench_began" in connection.info and "bench_first" not in connection.info:
            connection.info["bench_first"] = " ".join(statement.split())[:80]

    def _end(connection: Any) -> None:
        began = connection.info.pop("bench_began", None)
        first = connection.info.pop("bench_first", "")
        if began is not None:
            with figures.lock:
                figures.writes.append((time.perf_counter() - began, first))

    event.listen(engine, "commit", _end)
    event.listen(engine, "rollback", _end)


def timed(figures: Figures, into: list[float], what: str, call: Callable[[], Any]) -> Any:
    began = time.perf_counter()
    try:
        result = call()
    except Exception as error:  # counted, never hidden: the figure is what a person sees
        figures.error(f"{what}: {type(error).__name__}: {error}")
        return None
    finally:
        with figures.lock:
            into.append(time.perf_counter() - began)
    status = getattr(result, "status_code", 200)
    if status >= 500:
        figures.error(f"{what}: HTTP {status}: {result.text[:200]}")
    return result


def token(page: str) -> str:
    found = _CSRF.search(page)
    if found is None:
        raise RuntimeError("the page carries no CSRF token")
    return found.group(1).replace("&#43;", "+")


def sign_in(client: TestClient) -> None:
    api_key = create_key(REVIEWER.tenant_id, CONSOLE_USER, ("admin",))[1]
    page = client.get("/console/login")
    client.post(
        "/console/login",
        data={"api_key": api_key, "csrf_token": token(page.text), "next": "/console/queue"},
        follow_redirects=False,
    )


def side_runs(count: int, timeout_s: float) -> list[uuid.UUID]:
    """Runs taken to their SoA approval wait, for the console user to approve later."""
    reviewer = ScriptedReviewer(REVIEWER)
    ids = []
    for n in range(count):
        assessment = create_assessment(OWNER, "side-org", f"Side assessment {n + 1}")
        for path in sorted(SAMPLES.iterdir()):
            upload_document(OWNER, assessment.id, path.name, path.read_bytes())
        ids.append(start_lifecycle(OWNER, assessment.id, idempotency_key=f"side-{n}").id)
    deadline = time.monotonic() + timeout_s
    pending = set(ids)
    while pending:
        if time.monotonic() > deadline:
            raise TimeoutError(f"side runs not at their SoA approval: {pending}")
        for run_id in list(pending):
            run = get_run(OWNER, run_id)
            if run.status == "waiting_for_input":
                reviewer.answer(run)
            elif run.current_step == Step.WAIT_FOR_SOA_APPROVAL.value:
                pending.discard(run_id)
            elif run.status in ("failed", "blocked"):
                raise RuntimeError(f"side run {run_id} {run.status}")
        time.sleep(0.1)  # a setup loop, not a measurement
    return ids


def approve(client: TestClient, figures: Figures, run_id: uuid.UUID) -> None:
    run = get_run(OWNER, run_id)
    version = run.context["artifacts"]["soa"]
    run_url = f"/console/runs/{run_id}"
    review_url = f"{run_url}/artifacts/soa?version={version}"
    page = client.get(review_url).text
    form = page[page.index(f'action="{run_url}/artifacts/soa/decision"') :]
    found = re.search(r'name="key" value="([^"]+)"', form)
    if found is None:
        raise RuntimeError("the review page has no decision form")
    data = {
        "csrf_token": token(page),
        "key": found.group(1),
        "version": version,
        "decision": "approved",
        "role": "assessor",
        "comment": "approved while the fleet works",
    }
    sent = timed(
        figures,
        figures.decisions,
        f"approve {run_id}",
        lambda: client.post(f"{run_url}/artifacts/soa/decision", data=data, follow_redirects=False),
    )
    if sent is not None and sent.status_code != 303:
        figures.error(f"approve {run_id}: HTTP {sent.status_code}")


def console_user(
    figures: Figures, client: TestClient, sides: list[uuid.UUID], stop: threading.Event
) -> None:
    demo: uuid.UUID | None = None
    while demo is None and not stop.is_set():
        runs = list_runs(OWNER, limit=50).items
        demo = next((r.id for r in runs if r.id not in sides), None)
        time.sleep(0.05)  # until the demo has started its run
    if demo is None:
        return
    served: set[str] = set()
    run_id, page_url = demo, f"/console/runs/{demo}"
    while not stop.is_set():
        timed(figures, figures.reads, "console run page", lambda: client.get(page_url))
        run = timed(figures, figures.reads, "get_run", lambda: get_run(OWNER, run_id))
        step = str(run.current_step or "") if run is not None else ""
        # One approval during each job step of the demo run, while that job runs.
        running = run is not None and run.status == "running" and step in JOB_STEPS
        if running and step not in served and sides:
            served.add(step)
            approve(client, figures, sides.pop(0))
        time.sleep(0.05)  # a person's polling interval, short: jobs take seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--side-runs", type=int, default=11, help="one per job of the demo run")
    parser.add_argument("--timeout", type=float, default=900.0)
    add_record_flag(parser)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="lifecycle-contention-"))
    for name in ("LIFECYCLE_DATABASE_URL", "LIFECYCLE_BROKER_URL", "LIFECYCLE_STORAGE_DIR"):
        os.environ.pop(name, None)
    os.environ["LIFECYCLE_HOME"] = str(home)
    os.environ["LIFECYCLE_API_EMBEDDED_WORKER"] = "false"
    os.environ.setdefault("LIFECYCLE_OBSERVABILITY_LOG_LEVEL", "WARNING")
    reset_process_state()
    upgrade()
    from orchestrator.api import app

    figures = Figures()
    began = time.monotonic()
    with embedded_worker(get_app(), concurrency=3):
        for role in ("assessor", "compliance_lead"):
            grant_role(REVIEWER.tenant_id, CONSOLE_USER, role, actor_id="user:admin@example.org")
        sides = side_runs(args.side_runs, args.timeout)
        ready = time.monotonic()
        instrument(figures)
        client = TestClient(app)
        sign_in(client)
        stop = threading.Event()
        user = threading.Thread(target=console_user, args=(figures, client, list(sides), stop))
        user.start()
        try:
            result = run_demo(say=lambda _: None, stall_s=args.timeout)
        finally:
            stop.set()
            user.join()
    longest_write = max(figures.writes, default=(0.0, ""))
    locked = sum(
        LOCKED in e or "database_busy" in e or "Database busy" in e for e in figures.errors
    )
    embedder = os.environ.get("LIFECYCLE_EMBEDDER") or "minilm (default)"
    print(f"embedder: {embedder}; demo run {result.run.status} in {result.seconds:.1f} s")
    print(
        f"side runs prepared in {ready - began:.1f} s; approved during jobs: "
        f"{len(figures.decisions)}"
    )
    print(
        f"write transactions: {len(figures.writes)}; longest {longest_write[0]:.3f} s "
        f"(opened by: {longest_write[1]})"
    )
    print(f"reads: {len(figures.reads)}; longest wait {max(figures.reads, default=0):.3f} s")
    print(
        f"decisions (console POST, including its wait of up to 5 s for the coordinator "
        f"to apply the approval): {len(figures.decisions)}; longest wait "
        f"{max(figures.decisions, default=0):.3f} s"
    )
    print(f"errors: {len(figures.errors)}; 'database is locked' (or busy): {locked}")
    for line in figures.errors[:10]:
        print(f"  {line}")
    record_if_asked(
        args,
        "embedded_contention",
        [
            ("longest read wait", max(figures.reads, default=0), "s"),
            ("longest write transaction", longest_write[0], "s"),
            ("longest console approval", max(figures.decisions, default=0), "s"),
            ("errors (database is locked)", locked, ""),
            ("demo run", result.seconds, "s"),
        ],
    )


if __name__ == "__main__":
    main()
