"""A real browser on a real server: Debian's Chromium driven through chromedriver by
Selenium, against uvicorn serving the app on a free loopback port (embedded default:
SQLite and the in-process worker). Screenshots go to the test results directory."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = ("chromium", "chromium-browser")
DRIVER = "chromedriver"


def browser_binaries() -> tuple[str, str] | None:
    chromium = next((found for name in CHROMIUM if (found := shutil.which(name))), None)
    driver = shutil.which(DRIVER)
    return (chromium, driver) if chromium and driver else None


def require_browser() -> tuple[str, str]:
    """The binaries; in CI their absence fails the test, locally it skips it."""
    found = browser_binaries()
    if found is None:
        message = "chromium and chromedriver are not installed (.ci/run installs them)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(message)
        pytest.skip(message)
    return found


def artifacts_dir() -> Path:
    root = Path(os.environ.get("LIFECYCLE_TEST_ARTIFACTS", REPO / "tests" / ".artifacts"))
    target = root / "console"
    target.mkdir(parents=True, exist_ok=True)
    return target


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def uvicorn_server(home: Path, extra_env: dict[str, str] | None = None) -> Iterator[str]:
    """`uvicorn orchestrator.api:app` on a free loopback port, on the embedded default
    under `home`; yields its base URL once it answers."""
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("LIFECYCLE_") or k.startswith("LIFECYCLE_TEST_")
    }
    env.update(
        {
            "LIFECYCLE_HOME": str(home),
            "LIFECYCLE_CONSOLE_POLL_INTERVAL_S": "0.5",
            **(extra_env or {}),
        }
    )
    log = (home / "server.log").open("wb")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "orchestrator.api:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        cwd=REPO,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert process.poll() is None, (home / "server.log").read_text()[-3000:]
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=2) as answer:
                    if answer.status == 200:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "the server did not answer within 90 s"
            time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
        log.close()


@contextmanager
def chromium_driver() -> Iterator[object]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium, driver_path = require_browser()
    profile = tempfile.mkdtemp(prefix="console-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-default-apps",
        "--window-size=1366,900",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
