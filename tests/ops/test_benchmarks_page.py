"""docs/benchmarks.md is what `python -m bench.page` writes, names no commit, and every
bench program records its figures through bench/record.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import page
from bench.record import RESULTS, Figure, Record, command_line, latest

ROOT = Path(__file__).resolve().parents[2]
#: A commit's id as prose would cite it: 7 to 40 hex characters, digits and letters both.
_COMMIT = re.compile(r"\b(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b")
_HELPERS = {"__init__", "fleet_environment", "options", "record", "page"}


def programs() -> list[str]:
    found = [p.stem for p in (ROOT / "bench").glob("*.py") if p.stem not in _HELPERS]
    return sorted([*found, "compare"])


def test_the_pages_are_what_the_generator_writes() -> None:
    assert page.main(["--check"]) == 0, "run `python -m bench.page` and commit the pages"


@pytest.mark.parametrize("name", ["benchmarks.md", "benchmarks-history.md"])
def test_no_commit_hash_in_the_benchmark_pages(name: str) -> None:
    text = (ROOT / "docs" / name).read_text()
    assert _COMMIT.findall(text) == []


def test_the_commit_pattern_finds_a_short_and_a_long_id_but_no_number_or_word() -> None:
    text = "at 5a25f92, 2e7f886c0ffee1234567890abcdef12345678901; 1234567 rows, defaced"
    assert _COMMIT.findall(text) == ["5a25f92", "2e7f886c0ffee1234567890abcdef12345678901"]


def test_every_bench_program_has_a_results_file_a_section_and_a_record_flag() -> None:
    records = latest()
    sections = {s.bench for s in page.sections(page.TEXT.read_text())}
    for name in programs():
        assert name in records, f"bench/results/{name}.json"
        assert records[name].bench == name
        assert name in sections, f"a section of bench/page_text.md for {name}"
        source = ROOT / "bench" / (f"{name}.py" if name != "compare" else "compare/__main__.py")
        assert "add_record_flag(parser)" in source.read_text(), name


def test_every_results_file_reads_as_a_record() -> None:
    for path in RESULTS.glob("*.json"):
        data = json.loads(path.read_text())
        assert set(data) == {"bench", "date", "machine", "command", "source", "figures", "commit"}
        record = Record.from_json(data)
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", record.date), path
        assert record.command.startswith(f"python -m bench.{path.stem}"), path


def test_a_recorded_command_is_the_run_without_record() -> None:
    assert command_line("fan_out", ["--workers", "1,2", "--record"]) == (
        "python -m bench.fan_out --workers 1,2"
    )


def test_figures_show_their_units_and_the_first_is_the_headline() -> None:
    record = Record(
        "fan_out",
        "2026-12-07",
        "2 cores",
        "python -m bench.fan_out",
        "recorded",
        [Figure("speed-up, 2 processes", 2.0123, "x"), Figure("1 process", 83.1, "s")],
    )
    shown = page.figures(record)
    assert "| speed-up, 2 processes | 2.012x |" in shown and "| 1 process | 83.1 s |" in shown
    [section] = page.sections(
        "## Fan out\n<!-- bench: fan_out -->\n\n**Question.** Faster?\n\n"
        "```bash\npip install x\npython -m bench.fan_out  # note\n```\n"
    )
    row = page.table([section], {"fan_out": record}).splitlines()[-1]
    assert row == (
        "| [Fan out](#fan-out) | Faster? | `python -m bench.fan_out` | "
        "speed-up, 2 processes: **2.012x** | 2026-12-07 |"
    )
