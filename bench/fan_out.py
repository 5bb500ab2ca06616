"""index_kb fanned out: seconds to embed the evidence procedures' chunks with 1, 2 and 4
worker processes taking batches (the job's own process plus kb_index workers).

Real PostgreSQL and broker, a fresh database; the procedures (shared/data/evidence,
beside the repository) are cut into paragraph chunks and stored as one assessment's, then
embedded from scratch once per worker count, after one uncounted warm-up round, with the
configured embedder (LIFECYCLE_EMBEDDER, MiniLM by default). Prints chunks, batches,
seconds and the speed-up over the smallest worker count.

    python -m bench.fan_out --procedures 141 --workers 1,2,4 \\
        --database-url postgresql://postgres@127.0.0.1:5432/test \\
        --broker-url redis://127.0.0.1:6379/14
"""

from __future__ import annotations

import argparse
import hashlib
import os
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import create_engine, delete, text
from sqlalchemy.engine import make_url

from bench.options import add_database_url
from bench.record import add_record_flag, record_if_asked

ROOT = Path(__file__).resolve().parents[1]
PROCEDURES = ROOT.parent / "shared" / "data" / "evidence" / "procedures"


def _drop_database(server_url: str, url: str) -> None:
    from orchestrator.db.session import dispose_engines

    dispose_engines()
    admin = create_engine(
        make_url(server_url).set(drivername="postgresql+psycopg"), isolation_level="AUTOCOMMIT"
    )
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{make_url(url).database}" WITH (FORCE)'))
    admin.dispose()


def _fresh_database(server_url: str) -> str:
    from orchestrator.db.migrate import upgrade

    server = make_url(server_url).set(drivername="postgresql+psycopg")
    name = f"lifecycle_fanout_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    admin.dispose()
    url = server.set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    return url


def _paragraphs(body: str, limit: int = 900) -> list[str]:
    chunks: list[str] = []
    for paragraph in (p.strip() for p in body.split("\n\n")):
        if not paragraph:
            continue
        if chunks and len(chunks[-1]) + len(paragraph) < limit:
            chunks[-1] += "\n\n" + paragraph
        else:
            chunks.append(paragraph)
    return chunks


def _store_procedures(count: int) -> tuple[uuid.UUID, int]:
    from orchestrator.contracts.clock import utcnow
    from orchestrator.db.models import Assessment, Document, DocumentChunk
    from orchestrator.db.session import transaction

    now = utcnow()
    chunks = 0
    with transaction() as session:
        assessment = Assessment(
            tenant_id="bench",
            organization_id="bench",
            name="fan-out bench",
            status="in_progress",
            created_by="bench",
            created_at=now,
        )
        session.add(assessment)
        session.flush()
        for path in sorted(PROCEDURES.glob("*.md"))[:count]:
            data = path.read_bytes()
            document = Document(
                tenant_id="bench",
                assessment_id=assessment.id,
                filename=path.name,
                media_type="text/markdown",
                size_bytes=len(data),
                sha256=hashlib.sha256(data).hexdigest(),
                storage_path=str(path),
                status="ingested",
                uploaded_by="bench",
                created_at=now,
            )
            session.add(document)
            session.flush()
            for ordinal, body in enumerate(_paragraphs(data.decode(errors="replace"))):
                digest = hashlib.sha256(f"{document.id}:{ordinal}".encode()).hexdigest()
                session.add(
                    DocumentChunk(
                        id=digest,
                        document_id=document.id,
                        assessment_id=assessment.id,
                        ordinal=ordinal,
                        heading_path=path.stem,
                        text=body,
                        sha256=hashlib.sha256(body.encode()).hexdigest(),
                        created_at=now,
                    )
                )
                chunks += 1
        return assessment.id, chunks


def _request(assessment_id: uuid.UUID, round_no: int) -> object:
    from orchestrator.contracts.jobs import JobKind, JobRequest
    from orchestrator.contracts.steps import AssessmentLifecycleStep as Step

    run_id = uuid.uuid4()
    return JobRequest(
        job_id=f"{run_id}:index_kb:{round_no}",
        kind=JobKind.INDEX_KB,
        run_id=run_id,
        step=Step.INDEX_KB,
        attempt=1,
        idempotency_key=f"bench-{round_no}",
        trace_id="bench",
        tenant_id="bench",
        organization_id="bench",
        assessment_id=assessment_id,
        actor_id="bench",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--procedures", type=int, default=141)
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--batch-size", type=int, default=64)
    add_database_url(parser)
    parser.add_argument("--broker-url", default="redis://127.0.0.1:6379/14")
    add_record_flag(parser)
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="fanout-bench-"))
    env = {
        "LIFECYCLE_DATABASE_URL": _fresh_database(args.database_url),
        "LIFECYCLE_BROKER_URL": args.broker_url,
        "LIFECYCLE_HOME": str(home),
    }
    os.environ.update(env)
    from orchestrator.testing.reset import reset_process_state

    reset_process_state()
    try:
        return _measure(args, env, home)
    finally:
        _drop_database(args.database_url, env["LIFECYCLE_DATABASE_URL"])


def _measure(args: argparse.Namespace, env: dict[str, str], home: Path) -> int:
    from orchestrator.db.batch_models import JobBatch
    from orchestrator.db.models import ChunkEmbedding
    from orchestrator.db.session import transaction
    from orchestrator.testing.worker_processes import WorkerProcesses
    from workers.kb_index.fan_out import embed_in_batches

    assessment_id, chunks = _store_procedures(args.procedures)
    batches = -(-chunks // args.batch_size)
    print(f"{args.procedures} procedures, {chunks} chunks, {batches} batches of {args.batch_size}")
    seconds: dict[int, float] = {}
    counts = [int(w) for w in args.workers.split(",")]
    # One uncounted round first: the database's caches and the driver's model are cold in
    # it (measured 90.6 s against 80.4 s warm for one process), which would flatter the rest.
    for round_no, workers in enumerate([counts[0], *counts]):
        with transaction() as session:
            session.execute(delete(ChunkEmbedding))
            session.execute(delete(JobBatch))
        with WorkerProcesses(env, home / "logs", ready_timeout_s=120) as fleet:
            for _ in range(workers - 1):  # the job's own process is the first
                fleet.start("kb_index", pool="solo", concurrency=1)
            began = time.monotonic()
            done = embed_in_batches(_request(assessment_id, round_no + 1), args.batch_size)  # type: ignore[arg-type]
            took = time.monotonic() - began
        if round_no == 0:
            print(f"warm-up, workers={workers}: {took:.1f} s (not counted)")
            continue
        seconds[workers] = took
        speedup = seconds[min(seconds)] / seconds[workers]
        print(
            f"workers={workers}: {done.embedded} chunks in {seconds[workers]:.1f} s "
            f"({done.embedded / seconds[workers]:.1f} chunks/s), x{speedup:.2f} vs {min(seconds)}"
        )
    first = seconds[counts[0]]
    speedups = [(f"speed-up, {n} processes", first / seconds[n], "x") for n in counts[1:]]
    taken = [(f"{n} process{'es' if n > 1 else ''}", s, "s") for n, s in seconds.items()]
    record_if_asked(args, "fan_out", speedups + taken)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
