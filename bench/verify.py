"""How long `lifecycle verify RUN` takes on a whole SCF run: the demo on the embedded
default with the SCF framework (a 1,090-row SoA), every draft approved by the scripted
reviewer, then each approval's seal recomputed (the artifacts' canonical JSON, every cited
document's row and stored file). Prints the run's size and the time of `verify`.

    python -m bench.verify [--framework SCF] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

from bench.record import add_record_flag, record_if_asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--framework", default="SCF")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--timeout", type=float, default=3600.0)
    add_record_flag(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as home:
        for name in ("LIFECYCLE_DATABASE_URL", "LIFECYCLE_BROKER_URL", "LIFECYCLE_STORAGE_DIR"):
            os.environ.pop(name, None)
        os.environ["LIFECYCLE_HOME"] = home
        figures = measure(Path(home), args.framework, args.repeat, args.timeout)
    record_if_asked(args, "verify", figures)


def measure(
    home: Path, framework: str, repeat: int, timeout_s: float
) -> list[tuple[str, float, str]]:
    # Imported here: LIFECYCLE_HOME is set first.
    from orchestrator.contracts.canonical import canonical_json
    from orchestrator.db.migrate import upgrade
    from orchestrator.db.models import Artifact
    from orchestrator.db.session import read_transaction
    from orchestrator.demo.run import OWNER, run_demo
    from orchestrator.engine.messages import get_app
    from orchestrator.runtime.embedded import embedded_worker
    from orchestrator.service.seal_verification import verify_run

    upgrade()
    began = time.monotonic()
    with embedded_worker(get_app(), concurrency=2):
        result = run_demo(say=lambda _: None, framework=framework, stall_s=timeout_s)
    demo_s = time.monotonic() - began
    print(f"demo ({framework}): {result.run.status} in {demo_s:.0f} s")
    with read_transaction() as session:
        soa = session.scalars(
            select(Artifact)
            .where(Artifact.run_id == result.run.id, Artifact.kind == "soa")
            .order_by(Artifact.version.desc())
        ).first()
        assert soa is not None
        rows = len(soa.content.get("requirements") or [])
        soa_bytes = len(canonical_json(soa.content))
    timings = []
    checked = None
    for _ in range(repeat):
        start = time.perf_counter()
        checked = verify_run(OWNER, result.run.id)
        timings.append(time.perf_counter() - start)
    assert checked is not None
    documents = {d for a in checked.approvals for d in a.cited_documents}
    print(f"SoA rows: {rows}; SoA canonical JSON: {soa_bytes / 1e6:.1f} MB")
    print(
        f"approvals verified: {len(checked.approvals)}; distinct cited documents: {len(documents)}"
    )
    print(f"verified: {checked.verified}; changes: {len(checked.changes())}")
    print(
        f"verify: median {statistics.median(timings) * 1000:.0f} ms, "
        f"min {min(timings) * 1000:.0f} ms, max {max(timings) * 1000:.0f} ms over {repeat}"
    )
    return [
        (f"verify, median of {repeat}", statistics.median(timings) * 1000, "ms"),
        ("verify, min", min(timings) * 1000, "ms"),
        ("verify, max", max(timings) * 1000, "ms"),
        (f"demo run ({framework})", demo_s, "s"),
        ("SoA rows", rows, "rows"),
    ]


if __name__ == "__main__":
    main()
