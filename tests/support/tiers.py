"""The suite's tiers: which tests a plain run takes, and each tier's time at the end.

A plain `python -m pytest` runs the fast tiers: the unit tests and the integration tests
(real PostgreSQL, Redis and worker processes). The slow tiers (drafts from the shared real
policy sets with the real model, private servers broken on purpose, several hosts, a real
browser) run
with `--tiers all` (CI) or `--tiers slow`. Naming tests (a path, a node id) or choosing
them by marker (`-m browser`) runs what was named, whatever its tier.
"""

from __future__ import annotations

from collections import defaultdict

import pytest
from _pytest.terminal import TerminalReporter

#: Slow tiers, each a marker; a test carrying one belongs to the first it carries.
SLOW_TIERS = ("realdata", "faults", "multihost", "browser")
#: The slow tiers that start servers, worker processes or a browser.
SERVER_TIERS = ("faults", "multihost", "browser")
#: Every tier, slowest last, as the summary prints them.
TIERS = ("unit", "integration", *SLOW_TIERS)


def tier_of(keywords: object) -> str:
    """The tier of a test from its markers (a report's or an item's keywords)."""
    names = set(keywords)  # type: ignore[call-overload]
    for tier in SLOW_TIERS:
        if tier in names:
            return tier
    return "integration" if "integration" in names else "unit"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--tiers",
        choices=("fast", "slow", "all"),
        default="fast",
        help="fast: unit and integration tests (the default); slow: "
        + ", ".join(SLOW_TIERS)
        + "; all: both. Ignored when tests are named or chosen with -m.",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The servers' tiers' files first: with -n, they start at once on the workers and the
    # fast files fill in around them, rather than ending the run one after another. The
    # real-data files keep their place among the rest: CPU-bound, beside a fault test's
    # private servers and worker processes they would starve its timing.
    items.sort(key=lambda item: tier_of(item.keywords) not in SERVER_TIERS)
    chosen = config.getoption("--tiers")
    named = config.args_source is not pytest.Config.ArgsSource.TESTPATHS
    if chosen == "all" or named or config.option.markexpr:
        return
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        slow = tier_of(item.keywords) in SLOW_TIERS
        (keep if slow == (chosen == "slow") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    seconds: dict[str, float] = defaultdict(float)
    tests: dict[str, set[str]] = defaultdict(set)
    for reports in terminalreporter.stats.values():
        for report in reports:
            if isinstance(report, pytest.TestReport):
                tier = tier_of(report.keywords)
                seconds[tier] += report.duration
                tests[tier].add(report.nodeid)
    if not tests:
        return
    terminalreporter.write_sep("=", "time per tier (test setup, call and teardown, summed)")
    for tier in TIERS:
        if tests[tier]:
            terminalreporter.write_line(
                f"{tier:<12} {len(tests[tier]):>5} tests {seconds[tier]:>9.1f} s"
            )
