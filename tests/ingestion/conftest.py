"""Ingestion tests: parser sandboxes with test limits, and the real-world documents."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.config.ingestion import MIB, IngestionLimits
from tests.support.polling import scaled
from tests.support.shared_data import SHARED_DATA
from workers.ingestion.sandbox import ParserSandbox


@pytest.fixture(scope="module")
def hostile_sandbox() -> Iterator[ParserSandbox]:
    """A parser process that also knows the misbehaving test readers. Its time limit is
    the usual one: only a test of the hanging reader shortens it (see `hang_limit`)."""
    limits = IngestionLimits(
        parse_timeout_s=scaled(60),
        parser_memory_bytes=512 * MIB,
        reader_plugins=["tests.support.hostile_readers"],
    )
    sandbox = ParserSandbox(limits)
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="module")
def sandbox() -> Iterator[ParserSandbox]:
    sandbox = ParserSandbox(IngestionLimits())
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(
            f"real-document corpus not found at {SHARED_DATA} (it lives beside the "
            "repository, in shared/data, and is never committed)"
        )
    return SHARED_DATA
