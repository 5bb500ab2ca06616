"""Fixtures every area shares (tests/support), and the tier marker.

A test that uses the real services (the `services` fixture: PostgreSQL and Redis from
LIFECYCLE_TEST_DATABASE_URL and LIFECYCLE_TEST_BROKER_URL) is marked `integration`, so
`-m "not integration"` runs the fast tier alone.
"""

from __future__ import annotations

import os

import pytest

# What every entry point imports: the handlers registered for declared kinds and sweeps.
from orchestrator.runtime import registrations  # noqa: F401
from tests.support.embedded import drop_template

# The fleet's tests exercise orchestration, and on SQLite a job holds the write lock while
# it runs: they use the hashing embedder, which needs no model. Retrieval tests choose the
# MiniLM model explicitly (test_minilm_numpy.py, test_drafts_real_data.py); worker
# processes inherit this.
os.environ.setdefault("LIFECYCLE_EMBEDDER", "hashing")
# Most worker processes the tests start never read the catalogue; the preload's own test
# turns it on (tests/engine/test_worker_preload.py).
os.environ.setdefault("LIFECYCLE_WORKER_PRELOAD", "false")

# The tests' webhook receivers and export targets listen on 127.0.0.1, which the product
# refuses unless an operator allows it: the suite allows loopback, as an operator would,
# and the refusal tests take it away (tests/sweeps/test_outbound_addresses.py).
os.environ.setdefault("LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS", '["127.0.0.0/8", "::1/128"]')

pytest_plugins = [
    "pytester",
    "tests.support.embedded",
    "tests.support.fleet",
    "tests.support.outside_effects",
    "tests.support.server_errors",
    "tests.support.tiers",
]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "services" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.integration)


def pytest_sessionfinish(session: pytest.Session) -> None:
    drop_template()
