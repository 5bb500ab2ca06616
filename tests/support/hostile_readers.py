"""Reader plugins that misbehave like broken native parsers do: hang, crash, eat memory.

Loaded into the parser process with LIFECYCLE_INGEST_READER_PLUGINS (tests only).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from workers.ingestion.parse import ParsedDocument
from workers.ingestion.readers.registry import register_reader

HANG = "application/x-test-hang"
CRASH = "application/x-test-crash"
GREEDY = "application/x-test-greedy"


def _hang(path: Path, limits: IngestionLimits) -> ParsedDocument:
    # A parser stuck in a loop, deaf to everything but SIGKILL.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    while True:
        pass


def _crash(path: Path, limits: IngestionLimits) -> ParsedDocument:
    os.kill(os.getpid(), signal.SIGSEGV)  # what a segfault in C code looks like
    raise AssertionError("unreachable")


def _greedy(path: Path, limits: IngestionLimits) -> ParsedDocument:
    # One request past the parser's address-space limit: refused at once, no page touched.
    hoard = bytearray(limits.parser_memory_bytes + 256 * 1024 * 1024)
    raise AssertionError(f"allocated {len(hoard)} bytes past the limit")


register_reader(HANG, _hang)
register_reader(CRASH, _crash)
register_reader(GREEDY, _greedy)
