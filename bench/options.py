"""Command-line options the benchmarks share."""

from __future__ import annotations

import argparse
import os

DEFAULT_DATABASE_URL = "postgresql://postgres@127.0.0.1:5432/test"


def add_database_url(
    parser: argparse.ArgumentParser, help: str = "a PostgreSQL server's URL"
) -> None:
    """--database-url, by default the test tier's (LIFECYCLE_TEST_DATABASE_URL)."""
    parser.add_argument(
        "--database-url",
        default=os.environ.get("LIFECYCLE_TEST_DATABASE_URL", DEFAULT_DATABASE_URL),
        help=help,
    )
