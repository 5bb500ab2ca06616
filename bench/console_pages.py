"""The console's page weights and first paint, measured in Chromium on the embedded default.

1. Build (once per home): an assessment with the sample policies and, where
   `../shared/data/policies/` exists, the shared policies too (PDF, DOCX, HTML, Markdown
   and the awkward files that fail), one lifecycle run on the chosen framework driven to
   completed by the scripted reviewer (a gap analysis and a report amended, the SoA and
   the POA&M decided in bulk). The home keeps the run for later measurements.
2. Measure: uvicorn serves the console on that home; headless Chromium signs in and loads
   the run page and every draft's latest review page `--loads` times after a warm-up,
   and prints per page the medians of the HTML bytes, the bytes of the page with its
   static files, its height, its DOM nodes, the time to the first byte, the first
   contentful paint (Chromium's Paint Timing) and DOM ready (the whole page parsed:
   DOMContentLoaded), each from the start of the navigation.

    python -m bench.console_pages [--home DIR] [--framework NAME] [--loads 5]

Figures only: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.record import add_record_flag, record_if_asked

REPO = Path(__file__).resolve().parents[1]
SHARED_POLICIES = REPO / ".." / "shared" / "data" / "policies"
TENANT = "bench-console"
MARKER = "bench-console-run.json"
MEASURE_JS = """
const done = arguments[arguments.length - 1];
function report(paint) {
  const nav = performance.getEntriesByType('navigation')[0];
  const assets = performance.getEntriesByType('resource')
    .reduce((sum, r) => sum + (r.decodedBodySize || 0), 0);
  done({html: nav.decodedBodySize, assets: assets, ttfb: nav.responseStart,
        fcp: paint ? paint.startTime : null, ready: nav.domContentLoadedEventEnd,
        height: document.documentElement.scrollHeight,
        nodes: document.getElementsByTagName('*').length});
}
const seen = performance.getEntriesByName('first-contentful-paint')[0];
if (seen) { report(seen); } else {
  new PerformanceObserver((list) => {
    const paint = list.getEntriesByName('first-contentful-paint')[0];
    if (paint) { report(paint); }
  }).observe({type: 'paint', buffered: true});
  setTimeout(() => report(performance.getEntriesByName('first-contentful-paint')[0]), 5000);
}
"""


def _documents() -> list[Path]:
    from orchestrator.demo.run import SAMPLES

    found = sorted(SAMPLES.iterdir())
    if SHARED_POLICIES.is_dir():
        found += sorted(p for p in SHARED_POLICIES.rglob("*") if p.is_file())
    return found


def build(home: Path, framework: str) -> dict[str, Any]:
    """One completed run on `home`; its ids are kept beside the database."""
    from orchestrator.contracts.errors import LifecycleError
    from orchestrator.contracts.identity import Actor
    from orchestrator.contracts.signals import ArtifactKind
    from orchestrator.db.migrate import upgrade
    from orchestrator.demo.reviewer import ScriptedReviewer, drive
    from orchestrator.engine.messages import get_app
    from orchestrator.runtime.embedded import embedded_worker
    from orchestrator.service.documents import upload_document
    from orchestrator.service.producer import create_assessment, start_lifecycle
    from orchestrator.service.roles import grant_role

    owner = Actor(tenant_id=TENANT, actor_id="user:owner@bench.example")
    reviewer = Actor(tenant_id=TENANT, actor_id="user:reviewer@bench.example")
    upgrade()
    began = time.monotonic()
    with embedded_worker(get_app(), concurrency=2):
        assessment = create_assessment(owner, "bench-org", f"{framework} assessment")
        refused = 0
        for path in _documents():
            try:
                upload_document(owner, assessment.id, path.name, path.read_bytes())
            except LifecycleError:
                refused += 1
        run = start_lifecycle(owner, assessment.id, f"bench-{assessment.id}")
        grant_role(TENANT, reviewer.actor_id, "assessor", actor_id="user:admin@bench.example")
        script = ScriptedReviewer(
            reviewer,
            framework=framework,
            amend=frozenset({ArtifactKind.GAP_ANALYSIS, ArtifactKind.REPORT}),
            amender=owner,
        )
        finished = drive(script, run.id, timeout_s=1800)
    built = {
        "run_id": str(finished.id),
        "status": finished.status,
        "framework": framework,
        "documents": len(_documents()),
        "refused_at_upload": refused,
        "build_s": round(time.monotonic() - began, 1),
    }
    (home / MARKER).write_text(json.dumps(built))
    return built


def _pages(run_id: str) -> list[tuple[str, str]]:
    from orchestrator.contracts.identity import Actor
    from orchestrator.service.queries import list_artifacts

    kinds = sorted({a.kind for a in list_artifacts(Actor(TENANT, "bench"), _uuid(run_id))})
    return [("run", f"/console/runs/{run_id}")] + [
        (kind, f"/console/runs/{run_id}/artifacts/{kind}") for kind in kinds
    ]


def _uuid(value: str) -> Any:
    import uuid

    return uuid.UUID(value)


def measure(home: Path, run_id: str, loads: int) -> list[dict[str, Any]]:
    from orchestrator.service.apikeys import create_key
    from tests.console.browser import chromium_driver, uvicorn_server

    _, api_key = create_key(TENANT, "user:admin@bench.example", ("admin",))
    pages = _pages(run_id)
    rows = []
    with uvicorn_server(home) as base, chromium_driver() as opened:
        driver: Any = opened
        _sign_in(driver, base, api_key)
        driver.set_script_timeout(15)
        for name, path in pages:
            seen = []
            for attempt in range(loads + 1):
                driver.get(base + path)
                figures = driver.execute_async_script(MEASURE_JS)
                if attempt:  # the first load warms the server and the static files' cache
                    seen.append(figures)
            rows.append({"page": name, **_medians(seen)})
    return rows


def _sign_in(driver: Any, base: str, api_key: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{base}/console/login")
    driver.find_element(By.ID, "api_key").send_keys(api_key)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    deadline = time.monotonic() + 60
    while "/console/login" in driver.current_url:
        if time.monotonic() > deadline:
            raise RuntimeError("sign-in did not leave the sign-in page")
        time.sleep(0.05)


def _medians(seen: list[dict[str, Any]]) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for key in ("html", "assets", "height", "nodes", "ttfb", "fcp", "ready"):
        values = [s[key] for s in seen if s.get(key) is not None]
        out[key] = statistics.median(values) if values else None
    return out


def _print(rows: list[dict[str, Any]], built: dict[str, Any]) -> None:
    print(
        f"run {built['run_id']} ({built['framework']}, {built['documents']} documents, "
        f"{built['refused_at_upload']} refused at upload): medians"
    )
    print(
        f"{'page':<22}{'HTML KB':>10}{'with static KB':>16}{'height px':>12}{'DOM nodes':>11}"
        f"{'TTFB ms':>10}{'first paint ms':>16}{'DOM ready ms':>14}"
    )
    for row in rows:
        fcp = row["fcp"]
        print(
            f"{row['page']:<22}{row['html'] / 1024:>10.1f}"
            f"{(row['html'] + row['assets']) / 1024:>16.1f}{row['height']:>12.0f}"
            f"{row['nodes']:>11.0f}{row['ttfb']:>10.0f}"
            f"{(f'{fcp:.0f}' if fcp is not None else '-'):>16}{row['ready']:>14.0f}"
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--home", type=Path, help="keeps the run for later measurements")
    parser.add_argument("--framework", default="ISO/IEC 27001:2022")
    parser.add_argument("--loads", type=int, default=5)
    add_record_flag(parser)
    args = parser.parse_args(argv)
    home = (args.home or Path(tempfile.mkdtemp(prefix="bench-console-"))).resolve()
    home.mkdir(parents=True, exist_ok=True)
    for name in [n for n in os.environ if n.startswith("LIFECYCLE_")]:
        del os.environ[name]  # the embedded default, whatever this shell has set
    os.environ["LIFECYCLE_HOME"] = str(home)
    os.environ["LIFECYCLE_API_EMBEDDED_WORKER"] = "false"
    from orchestrator.config.settings import reset_settings

    reset_settings()
    marker = home / MARKER
    built = json.loads(marker.read_text()) if marker.exists() else build(home, args.framework)
    print(f"home {home}; built in {built['build_s']} s, run {built['status']}", file=sys.stderr)
    rows = measure(home, built["run_id"], args.loads)
    _print(rows, built)
    paints = [(f"first paint, {r['page']}", r["fcp"], "ms") for r in rows if r["fcp"] is not None]
    record_if_asked(
        args,
        "console_pages",
        paints + [(f"HTML, {r['page']}", r["html"] / 1024, "KB") for r in rows],
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
