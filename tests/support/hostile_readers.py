"""Reader plugins that misbehave like broken native parsers do: hang, crash, eat memory
(and one that is merely slow).

Loaded into the parser process with LIFECYCLE_INGEST_READER_PLUGINS (tests only).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

from orchestrator.config.ingestion import IngestionLimits
from workers.ingestion.parse import MARKDOWN, ParsedDocument, parse
from workers.ingestion.readers.registry import register_reader

HANG = "application/x-test-hang"
CRASH = "application/x-test-crash"
GREEDY = "application/x-test-greedy"
SLOW = "application/x-test-slow"
#: How long a slow document takes: long enough for a fault test to strike mid-job.
SLOW_PARSE_S = float(os.environ.get("LIFECYCLE_TEST_SLOW_PARSE_S", "2"))


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


def _slow(path: Path, limits: IngestionLimits) -> ParsedDocument:
    # A readable document that takes a while, as a long PDF does: the job is mid-flight.
    time.sleep(SLOW_PARSE_S)
    return parse(path.read_text(), MARKDOWN)


register_reader(HANG, _hang)
register_reader(CRASH, _crash)
register_reader(GREEDY, _greedy)
register_reader(SLOW, _slow)
