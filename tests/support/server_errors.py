"""The integration tier fails on any 5xx the API answers.

While an integration test runs (its setup, call and teardown), every line of the API's
access log (`orchestrator.api.access`: the console and the public evidence link are
served by the same app and logged there too) is watched; a 5xx fails the test that
produced it, naming each request. A test that provokes a 5xx on purpose says so:

    @pytest.mark.allows_server_error(reason="nothing consumes: /readyz answers 503",
                                     paths=("/readyz",))

`reason` is required; `paths` (exact paths) limits what is allowed, and without it every
path is. The requests seen are counted per surface and printed at the end of the run.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from _pytest.terminal import TerminalReporter

ACCESS_LOG = "orchestrator.api.access"
MARKER = "allows_server_error"
#: Path prefixes of each surface the access log serves, first match wins.
SURFACES: tuple[tuple[str, str], ...] = (
    ("/api/", "api"),
    ("/console", "console"),
    ("/w/", "public link"),
    ("/metrics", "operations"),
    ("/healthz", "operations"),
    ("/readyz", "operations"),
    ("/health", "operations"),
    ("/docs", "documentation"),
    ("/redoc", "documentation"),
    ("/openapi", "documentation"),
    ("/problems", "documentation"),
)


def surface_of(path: str) -> str:
    return next((name for prefix, name in SURFACES if path.startswith(prefix)), "other")


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    status: int

    def __str__(self) -> str:
        return f"{self.method} {self.path} {self.status}"


class Watch(logging.Handler):
    """The access log's requests during one test."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Request] = []
        self.checked = 0
        self.level_before = logging.NOTSET

    def emit(self, record: logging.LogRecord) -> None:
        status = getattr(record, "status", None)
        if isinstance(status, int):
            method, path = getattr(record, "method", ""), getattr(record, "path", "")
            self.seen.append(Request(str(method), str(path), status))

    def unchecked(self) -> list[Request]:
        fresh = self.seen[self.checked :]
        self.checked = len(self.seen)
        return fresh


_WATCH = pytest.StashKey[Watch]()
#: Every request the watch saw in this run, by surface; the 5xx among them; and those of
#: the 5xx a test's marker allowed.
_COUNTS: Counter[str] = Counter()
_ERRORS: Counter[str] = Counter()
_ALLOWED: Counter[str] = Counter()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(reason, paths=()): this integration test provokes a 5xx on purpose "
        "(on `paths` only, when given); the access-log check allows it",
    )


def _watched(item: pytest.Item) -> bool:
    return item.get_closest_marker("integration") is not None


def allowed(item: pytest.Item) -> tuple[str, ...] | None:
    """The paths whose 5xx the test allows: () for every path, None for none."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    reason = marker.kwargs.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        pytest.fail(f"@{MARKER} needs a reason='...'", pytrace=False)
    return tuple(marker.kwargs.get("paths", ()))


def unexpected(item: pytest.Item, requests: list[Request]) -> list[Request]:
    """The 5xx among `requests` that the test does not allow."""
    paths = allowed(item)
    return [
        r
        for r in requests
        if r.status >= 500 and not (paths is not None and (not paths or r.path in paths))
    ]


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Iterator[None]:
    if _watched(item):
        allowed(item)  # a marker without a reason is refused before the test runs
        watch = Watch()
        logger = logging.getLogger(ACCESS_LOG)
        watch.level_before = logger.level
        if logger.getEffectiveLevel() > logging.INFO:
            logger.setLevel(logging.INFO)  # the lines are INFO: make sure they are made
        logger.addHandler(watch)
        item.stash[_WATCH] = watch
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Iterator[None]:
    watch = item.stash.get(_WATCH, None)
    try:
        result = yield
    except BaseException:
        if watch is not None:  # the test failed already: its report lists them too
            bad = unexpected(item, watch.unchecked())
            if bad:
                item.add_report_section("call", "server errors", _listed(bad))
        raise
    if watch is not None:
        _fail_on(item, watch.unchecked(), "")
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    try:
        return (yield)
    finally:
        watch = item.stash.get(_WATCH, None)
        if watch is not None:
            logger = logging.getLogger(ACCESS_LOG)
            logger.removeHandler(watch)
            logger.setLevel(watch.level_before)
            del item.stash[_WATCH]
            refused = set(map(id, unexpected(item, watch.seen)))
            for request in watch.seen:
                _COUNTS[surface_of(request.path)] += 1
                _ERRORS[surface_of(request.path)] += request.status >= 500
                _ALLOWED[surface_of(request.path)] += (
                    request.status >= 500 and id(request) not in refused
                )
            _fail_on(item, watch.unchecked(), " outside the test's call")


def _listed(requests: list[Request]) -> str:
    return "; ".join(str(r) for r in requests)


def _fail_on(item: pytest.Item, requests: list[Request], when: str) -> None:
    bad = unexpected(item, requests)
    if bad:
        pytest.fail(
            f"the API answered {len(bad)} server error(s){when}: {_listed(bad)} "
            f"(a test that provokes one on purpose is marked @{MARKER}(reason=...))",
            pytrace=False,
        )


def pytest_terminal_summary(terminalreporter: TerminalReporter) -> None:
    if not _COUNTS:
        return
    terminalreporter.section("requests in the API's access log (integration tests)")
    for surface, count in sorted(_COUNTS.items()):
        terminalreporter.write_line(
            f"{surface:<14} {count:>6} requests, {_ERRORS[surface]} answered 5xx "
            f"({_ALLOWED[surface]} allowed by a marker)"
        )
