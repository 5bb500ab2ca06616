"""`lifecycle` command line (also `python -m orchestrator`)."""

from __future__ import annotations

import argparse
import logging
import sys

from orchestrator.settings import get_settings


def _demo(args: argparse.Namespace) -> int:
    from orchestrator.db.migrate import upgrade
    from orchestrator.demo import run_demo
    from orchestrator.embedded import embedded_worker
    from orchestrator.fleet import get_app

    settings = get_settings()
    if not settings.is_embedded_broker:
        print("demo: runs on the embedded default; unset LIFECYCLE_BROKER_URL", file=sys.stderr)
        return 2
    print(f"database: {settings.resolved_database_url}")
    upgrade()
    with embedded_worker(get_app(), concurrency=args.concurrency):
        result = run_demo(framework=args.framework)
    print()
    print(f"run {result.run.id}: {result.run.status} in {result.seconds:.1f} s")
    for step, seconds in result.steps:
        print(f"  {step:<30} {seconds * 1000:8.0f} ms")
    print(f"report: {result.report_path}")
    return 0 if result.run.status == "completed" else 1


def _migrate(_: argparse.Namespace) -> int:
    from orchestrator.db.migrate import upgrade

    upgrade()
    print("database is at the latest schema")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lifecycle", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run one whole assessment on the embedded default")
    demo.add_argument("--framework", default="SOC 2")
    demo.add_argument("--concurrency", type=int, default=4)
    demo.set_defaults(handler=_demo)
    migrate = commands.add_parser("migrate", help="bring the database to the latest schema")
    migrate.set_defaults(handler=_migrate)
    from orchestrator.api_cli import register_commands

    register_commands(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    return int(args.handler(args))


if __name__ == "__main__":
    sys.exit(main())
