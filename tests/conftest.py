"""Fixtures every area shares (tests/support), and the tier marker.

A test that uses the real services (the `services` fixture: PostgreSQL and Redis from
LIFECYCLE_TEST_DATABASE_URL and LIFECYCLE_TEST_BROKER_URL) is marked `integration`, so
`-m "not integration"` runs the fast tier alone.

Under pytest-xdist (`-n 2 --dist loadgroup`, the README's command) each module is a group
that one worker runs in order (module fixtures are built once, and some modules' tests
build on the one before), and the integration tests are one group of their own: one
worker runs them one after another, since they share the services' database and broker.
"""

from __future__ import annotations

import os

import pytest

# The fleet's tests exercise orchestration, and on SQLite a job holds the write lock while
# it runs: they use the hashing embedder, which needs no model. Retrieval tests choose the
# MiniLM model explicitly (test_minilm_numpy.py, test_drafts_real_data.py); worker
# processes inherit this.
os.environ.setdefault("LIFECYCLE_EMBEDDER", "hashing")

pytest_plugins = ["tests.support.embedded", "tests.support.fleet", "tests.support.outside_effects"]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        services = "services" in getattr(item, "fixturenames", ())
        if services:
            item.add_marker(pytest.mark.integration)
        group = "services" if services else item.nodeid.split("::", 1)[0]
        item.add_marker(pytest.mark.xdist_group(group))
