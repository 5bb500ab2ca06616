"""The server time of each review page of a 1,090-row SCF draft, v1 and after 5 amendments.

1. Build (once per home): on the embedded default (SQLite), one run whose drafting steps
   run the workers' own services on the SCF catalogue (the tests' standard policies as
   its documents; every draft from the scope to the POA&M as its version 1): the SoA and
   the evidence analysis have 1,090 rows, one per SCF control, the gap analysis and the
   POA&M 1,048. Each amendable draft (SoA, gap analysis, maturity assessment, POA&M) then
   takes 5 amendments as the service writes them (`amended_content`: one row, ten rows, a
   note, the first row again, twenty rows), each its next version; the run waits at the
   SoA's gate.
2. Measure: the console app (starlette's TestClient, in the measuring process) serves each
   draft's review page, v1 and v6, at the default page size (50 rows) and at 200,
   `--repeat` times after the page's first request; per page the median CPU time of the
   process (the server's threads and the client's) and wall time of a request, the CPU
   time of the page's first request, the transactions the request began and the
   statements it ran (SQLAlchemy's engine events).

Each round runs in a process of its own. With `--against DIR` (a checkout of other code:
the old) each round measures that code, then this one, in turn, and the table shows both
and the ratio of the CPU medians.

    python -m bench.review_pages [--home DIR] [--repeat 5] [--rounds 3] [--against DIR]
        [--record]

Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.record import add_record_flag, record_if_asked
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)

MARKER = "bench-review-run.json"
#: The review pages measured: the kind, its first table's slug (for the page size).
KINDS = (
    ("soa", "requirements"),
    ("evidence_analysis", None),
    ("gap_analysis", "gaps"),
    ("maturity_assessment", "controls"),
    ("poam", "items"),
)
AMENDED = ("soa", "gap_analysis", "maturity_assessment", "poam")


def _amendments(kind: str, content: dict[str, Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    """Five amendments of `kind`, each (reason, rows) as the console posts them."""
    from orchestrator.service.draft_rows import row_name, rows_in

    list_name, key = rows_in(kind)
    listed = [r for r in content.get(list_name, []) if isinstance(r, dict)]
    names = [row_name(listed, key, r) for r in listed]
    field = "owner"
    return [
        ("one row's owner", [{"row": names[0], "changes": {field: "CISO"}}]),
        ("ten rows' owner", [{"rows": names[1:11], "changes": {field: "IT operations"}}]),
        ("a note on a row", [{"row": names[len(names) // 2], "changes": {"note": "checked"}}]),
        ("the first row again", [{"row": names[0], "changes": {"note": "seen twice"}}]),
        ("twenty more", [{"rows": names[-20:], "changes": {field: "Security team"}}]),
    ]


def build(home: Path) -> dict[str, Any]:
    """The run and its drafts; the ids are kept beside the database."""
    from orchestrator.contracts.signals import ArtifactKind
    from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
    from orchestrator.service.amendments import amended_content
    from tests.support.services import USER, add_standard_documents, open_kit

    began = time.monotonic()
    with open_kit(home) as kit:
        add_standard_documents(kit)
        kit.session.commit()
        kit.run_through(Step.CREATE_POAM)  # each later step reads the approved drafts
        for kind in AMENDED:  # then back to drafts under review, as before an approval
            kit.approve(ArtifactKind(kind)).status = "draft"
        kit.session.commit()
        versions: dict[str, int] = {}
        for kind in AMENDED:
            artifact = kit.latest(ArtifactKind(kind))
            assert artifact is not None, kind
            content = artifact.content
            for reason, rows in _amendments(kind, content):
                content = amended_content(
                    content,
                    kind,
                    rows,
                    actor_id=USER,
                    reason=reason,
                    based_on=kit.next_version(ArtifactKind(kind)) - 1,
                )
                kit.add_artifact(ArtifactKind(kind), content, status="draft")
            kit.session.commit()
            versions[kind] = kit.next_version(ArtifactKind(kind)) - 1
        _waiting_at_soa(kit.run, versions)
        kit.session.commit()
        sizes = {}
        for kind, _ in KINDS:
            latest = kit.latest(ArtifactKind(kind))
            assert latest is not None, kind
            sizes[kind] = {k: len(v) for k, v in latest.content.items() if isinstance(v, list)}
        built = {
            "run_id": str(kit.run.id),
            "tenant": kit.run.tenant_id,
            "versions": versions,
            "sizes": sizes,
            "build_s": round(time.monotonic() - began, 1),
        }
    (home / MARKER).write_text(json.dumps(built))
    return built


def _waiting_at_soa(run: Any, versions: dict[str, int]) -> None:
    """The run as the lifecycle leaves it at the SoA's gate (its latest drafts current):
    the SoA's page then reads who may decide, the claim and the queue."""
    run.status = "waiting_for_approval"
    run.current_step = "wait_for_soa_approval"
    run.context = {"framework": "SCF", "artifacts": dict(versions)}


class Counter:
    """Transactions begun and statements run on every engine, while `counting`."""

    def __init__(self) -> None:
        self.transactions = 0
        self.statements = 0
        self.on = False

    def begin(self, *_: Any) -> None:
        if self.on:
            self.transactions += 1

    def statement(self, *_: Any) -> None:
        if self.on:
            self.statements += 1

    @contextmanager
    def counting(self) -> Iterator[None]:
        self.transactions = self.statements = 0
        self.on = True
        try:
            yield
        finally:
            self.on = False


def measure(built: dict[str, Any], repeat: int) -> list[dict[str, Any]]:
    from fastapi.testclient import TestClient
    from sqlalchemy import Engine, event

    from orchestrator.api import app
    from orchestrator.service.apikeys import create_key
    from tests.console.kit import Browser

    counter = Counter()
    event.listen(Engine, "begin", counter.begin)
    event.listen(Engine, "before_cursor_execute", counter.statement)
    _, api_key = create_key(built["tenant"], "user:bench@example", ("admin",))
    browser = Browser(TestClient(app))
    assert browser.sign_in(api_key).status_code == 303
    run_id = built["run_id"]
    # Imports, templates compiled, the catalogue read: what a process does once.
    assert browser.get(f"/console/runs/{run_id}/artifacts/scope").status_code == 200
    rows = []
    for kind, slug in KINDS:
        last = built["versions"].get(kind, 1)
        for version in sorted({1, last}):
            sizes = [50] if slug is None else [50, 200]
            for size in sizes:
                url = f"/console/runs/{run_id}/artifacts/{kind}?version={version}"
                if size != 50 and slug is not None:
                    url += f"&{slug}.size={size}"
                rows.append(
                    _time_page(browser, counter, url, repeat)
                    | {
                        "kind": kind,
                        "version": version,
                        "size": size,
                    }
                )
    return rows


def _time_page(browser: Any, counter: Counter, url: str, repeat: int) -> dict[str, Any]:
    cpu, wall = [], []
    began_cpu = time.process_time()
    page = browser.get(url)  # the first request of this page in this process
    first = time.process_time() - began_cpu
    assert page.status_code == 200, (url, page.status_code, page.text[:500])
    for _ in range(repeat):
        with counter.counting():
            began_cpu, began = time.process_time(), time.perf_counter()
            page = browser.get(url)
            cpu.append(time.process_time() - began_cpu)
            wall.append(time.perf_counter() - began)
        assert page.status_code == 200, (url, page.status_code)
    return {
        "first_cpu_ms": [first * 1000],
        "cpu_ms": [c * 1000 for c in cpu],
        "wall_ms": [w * 1000 for w in wall],
        "transactions": counter.transactions,
        "statements": counter.statements,
        "html_kb": len(page.content) / 1024,
    }


def _key(row: dict[str, Any]) -> tuple[str, int, int]:
    return (row["kind"], row["version"], row["size"])


def _print(
    rows: dict[str, list[dict[str, Any]]], built: dict[str, Any], repeat: int, rounds: int
) -> None:
    soa = built["sizes"]["soa"].get("requirements")
    print(
        f"run {built['run_id']} (SCF, SoA {soa} rows, v{built['versions']['soa']} after "
        f"5 amendments); CPU and wall medians of {repeat * rounds} requests "
        f"({rounds} rounds, old and new code alternating)"
        if len(rows) > 1
        else f"run {built['run_id']} (SCF, SoA {soa} rows); medians of {repeat * rounds}"
    )
    names = list(rows)
    head = f"{'page':<20}{'v':>3}{'rows':>5}"
    for name in names:
        head += f"{name + ' CPU ms':>14}{'wall ms':>9}{'first':>7}{'tx':>4}{'stmts':>6}"
    if len(names) == 2:
        head += f"{'CPU ratio':>11}"
    print(head)
    first = rows[names[0]]
    for index, row in enumerate(first):
        line = f"{row['kind']:<20}{row['version']:>3}{row['size']:>5}"
        for name in names:
            seen = rows[name][index]
            line += (
                f"{statistics.median(seen['cpu_ms']):>14.0f}"
                f"{statistics.median(seen['wall_ms']):>9.0f}"
                f"{statistics.median(seen['first_cpu_ms']):>7.0f}"
                f"{seen['transactions']:>4}{seen['statements']:>6}"
            )
        if len(names) == 2:
            old, new = (statistics.median(rows[n][index]["cpu_ms"]) for n in names)
            line += f"{old / new:>10.1f}x"
        print(line)


def _pooled(runs: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """The rounds' samples of each page together (its counts from the last round)."""
    pooled = [dict(row) for row in runs[-1]]
    for row in pooled:
        same = [r for run in runs for r in run if _key(r) == _key(row)]
        row["cpu_ms"] = [c for r in same for c in r["cpu_ms"]]
        row["wall_ms"] = [w for r in same for w in r["wall_ms"]]
        row["first_cpu_ms"] = [f for r in same for f in r["first_cpu_ms"]]
    return pooled


def _measure_in(code: Path, home: Path, repeat: int) -> list[dict[str, Any]]:
    """One round in a process of its own, importing the orchestrator from `code`."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        command = [sys.executable, "-m", "bench.review_pages", "--home", str(home)]
        command += ["--repeat", str(repeat), "--code", str(code), "--json", out.name]
        subprocess.run(command, check=True, cwd=Path(__file__).resolve().parents[1])
        rows: list[dict[str, Any]] = json.loads(Path(out.name).read_text())
        return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--home", type=Path, help="keeps the run for later measurements")
    parser.add_argument("--repeat", type=int, default=5, help="requests per page per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--against",
        type=Path,
        help="a checkout of other code (the old): each round measures it, then this one",
    )
    parser.add_argument("--code", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--json", type=Path, help=argparse.SUPPRESS)
    add_record_flag(parser)
    args = parser.parse_args(argv)
    if args.code:  # one round, in this process, of the code there
        sys.path.insert(0, str(args.code.resolve()))
    home = (args.home or Path(tempfile.mkdtemp(prefix="bench-review-"))).resolve()
    home.mkdir(parents=True, exist_ok=True)
    for name in [n for n in os.environ if n.startswith("LIFECYCLE_")]:
        del os.environ[name]  # the embedded default, whatever this shell has set
    os.environ["LIFECYCLE_HOME"] = str(home)
    os.environ["LIFECYCLE_DATABASE_URL"] = f"sqlite:///{home / 't.db'}"
    os.environ["LIFECYCLE_API_EMBEDDED_WORKER"] = "false"
    from orchestrator.config.settings import reset_settings

    reset_settings()
    marker = home / MARKER
    built = json.loads(marker.read_text()) if marker.exists() else build(home)
    if args.code:
        import orchestrator

        print(f"measuring {Path(orchestrator.__file__).parent}", file=sys.stderr)
        args.json.write_text(json.dumps(measure(built, args.repeat)))
        return 0
    print(f"home {home}; built in {built['build_s']} s", file=sys.stderr)
    this = Path(__file__).resolve().parents[1]
    codes = {"old": args.against, "new": this} if args.against else {"this": this}
    runs: dict[str, list[list[dict[str, Any]]]] = {name: [] for name in codes}
    for _ in range(args.rounds):
        for name, code in codes.items():
            runs[name].append(_measure_in(code, home, args.repeat))
    pooled = {name: _pooled(seen) for name, seen in runs.items()}
    _print(pooled, built, args.repeat, args.rounds)
    latest = pooled["new" if args.against else "this"]
    record_if_asked(args, "review_pages", _figures(latest, pooled.get("old")))
    return 0


def _figures(
    latest: list[dict[str, Any]], old: list[dict[str, Any]] | None
) -> list[tuple[str, float, str]]:
    """The headline first: the SoA after 5 amendments at the default page size."""
    ordered = sorted(latest, key=lambda r: (r["size"], r["kind"] != "soa", -r["version"]))
    figures = [
        (f"{r['kind']} v{r['version']}, {r['size']} rows a page, CPU", _median(r), "ms")
        for r in ordered
    ]
    figures += [
        ("first request of a page, most CPU", max(max(r["first_cpu_ms"]) for r in latest), "ms"),
        ("transactions per page request, most", max(r["transactions"] for r in latest), ""),
    ]
    if old is not None:
        before = {_key(r): r for r in old}
        figures += [
            (
                f"old/new CPU, {r['kind']} v{r['version']}, {r['size']} rows a page",
                _median(before[_key(r)]) / _median(r),
                "x",
            )
            for r in ordered
            if r["size"] == 50
        ]
        figures += [
            ("old code: slowest page, CPU", max(_median(r) for r in old), "ms"),
            (
                "old code: transactions per page request, most",
                max(r["transactions"] for r in old),
                "",
            ),
        ]
    return figures


def _median(row: dict[str, Any]) -> float:
    return float(statistics.median(row["cpu_ms"]))


if __name__ == "__main__":
    raise SystemExit(main())
