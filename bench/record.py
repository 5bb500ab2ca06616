"""A bench's latest figures, kept as `bench/results/<bench>.json`.

Every bench program takes `--record`: after its run it writes its headline figures here
(a few named numbers with units, the date, the machine, the command), appends the same
record to `bench/results/history.jsonl`, and regenerates docs/benchmarks.md and
docs/benchmarks-history.md (`python -m bench.page`). Without `--record` a bench only
prints.

A record:

    {"bench": "fan_out", "date": "2026-12-06", "machine": "2 cores (...), 24 GiB; ...",
     "command": "python -m bench.fan_out --workers 1,2,4",
     "source": "recorded", "commit": "...",
     "figures": [{"name": "speed-up, 2 processes", "value": 2.01, "unit": "x"}, ...]}

The first figure is the headline the page's table shows.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shlex
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
HISTORY = RESULTS / "history.jsonl"

#: (name, value, unit), as a bench hands them over.
Figures = Sequence[tuple[str, float, str]]


@dataclass(frozen=True)
class Figure:
    name: str
    value: float
    unit: str

    def shown(self) -> str:
        """`2.01x`, `41.3 s`, `0.504` (a score), at most four significant digits."""
        value = f"{self.value:,.0f}" if abs(self.value) >= 10_000 else f"{self.value:,.4g}"
        if not self.unit:
            return value
        return f"{value}{self.unit}" if self.unit in ("x", "%") else f"{value} {self.unit}"


@dataclass(frozen=True)
class Record:
    bench: str
    date: str
    machine: str
    command: str
    source: str
    figures: list[Figure] = field(default_factory=list)
    commit: str = ""

    @property
    def headline(self) -> Figure | None:
        return self.figures[0] if self.figures else None

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Record:
        figures = [Figure(**f) for f in data.get("figures", [])]
        return cls(**{**data, "figures": figures})


def add_record_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--record",
        action="store_true",
        help="write the figures to bench/results/ and regenerate docs/benchmarks.md",
    )


def record_if_asked(args: argparse.Namespace, bench: str, figures: Figures) -> None:
    """Write the record of this run when `--record` was given."""
    if getattr(args, "record", False):
        path = write(make_record(bench, figures))
        print(f"recorded {path}")


def make_record(bench: str, figures: Figures) -> Record:
    return Record(
        bench=bench,
        date=datetime.now(UTC).strftime("%Y-%m-%d"),
        machine=machine_line(),
        command=command_line(bench, sys.argv[1:]),
        source="recorded",
        figures=[Figure(name, round(float(value), 4), unit) for name, value, unit in figures],
        commit=_commit(),
    )


def command_line(bench: str, argv: Sequence[str]) -> str:
    shown = [arg for arg in argv if arg != "--record"]
    return " ".join(["python", "-m", f"bench.{bench}", *map(shlex.quote, shown)])


def machine_line() -> str:
    """The machine in one line: cores, CPU, memory, Python, the load at the end."""
    memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (
        f"{os.cpu_count()} cores ({_cpu_model()}), {memory:.0f} GiB; "
        f"Python {platform.python_version()}; 1-minute load average "
        f"{os.getloadavg()[0]:.1f} at the end"
    )


def write(record: Record) -> Path:
    """The latest figures, one line of history, then the pages."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{record.bench}.json"
    path.write_text(json.dumps(record.as_json(), indent=2, ensure_ascii=False) + "\n")
    with HISTORY.open("a") as history:
        history.write(json.dumps(record.as_json(), ensure_ascii=False) + "\n")
    from bench.page import write_pages

    write_pages()
    return path


def latest() -> dict[str, Record]:
    return {
        path.stem: Record.from_json(json.loads(path.read_text()))
        for path in sorted(RESULTS.glob("*.json"))
    }


def history() -> list[Record]:
    if not HISTORY.exists():
        return []
    return [Record.from_json(json.loads(line)) for line in HISTORY.read_text().splitlines() if line]


def _cpu_model() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


def _commit() -> str:
    """Kept in the record for whoever compares runs; the pages do not show it."""
    found = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    return found.stdout.strip()
