"""Fuzz the producer API from its OpenAPI document for a while: every check and phase on.

    python -m bench.api_fuzz --seed 7 --minutes 10 [--database-url postgresql://...]

Prints the cases tried, the operations reached, the failures by kind (with examples),
the document's links the stateful phase followed and the business rules met. No worker
runs: signals stay pending, as in the test.
"""

from __future__ import annotations

import argparse
import logging
import os
import tempfile

from bench.record import add_record_flag, record_if_asked


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seed", type=int, default=53)
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--examples", type=int, default=50, help="per operation and phase")
    parser.add_argument("--database-url", default=None, help="default: a fresh SQLite")
    add_record_flag(parser)
    args = parser.parse_args()
    os.environ["LIFECYCLE_HOME"] = tempfile.mkdtemp(prefix="api-fuzz-")
    os.environ["LIFECYCLE_API_EMBEDDED_WORKER"] = "false"
    os.environ["LIFECYCLE_API_MAX_SIGNAL_WAIT_S"] = "0.05"
    if args.database_url:
        os.environ["LIFECYCLE_DATABASE_URL"] = args.database_url
    logging.disable(logging.CRITICAL)  # the access log of every case drowns the figures

    from orchestrator.api import app
    from orchestrator.db.migrate import upgrade
    from orchestrator.service.apikeys import create_key
    from orchestrator.testing.api_fuzz import run

    upgrade()
    _, key = create_key("fuzz", "user:fuzz@acme.example", ("admin",))
    report = run(
        app,
        app.openapi(),
        headers={"Authorization": f"Bearer {key}"},
        seed=args.seed,
        max_examples=args.examples,
        max_seconds=int(args.minutes * 60),
    )
    print(f"seed {args.seed}, {args.minutes} min budget")
    print("\n".join(report.lines()))
    failures = sum(report.failures.values())
    record_if_asked(
        args,
        "api_fuzz",
        [
            ("failures", failures, ""),
            ("cases tried", report.cases, ""),
            ("links followed", len(report.links_followed), ""),
        ],
    )


if __name__ == "__main__":
    main()
