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
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.polling import scaled

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
        if not k.startswith("LIFECYCLE_")
        or k.startswith("LIFECYCLE_TEST_")
        or k == "LIFECYCLE_DATABASE_URL"  # the test's own database, when on PostgreSQL
    }
    env.update(
        {
            "LIFECYCLE_HOME": str(home),
            "LIFECYCLE_CONSOLE_POLL_INTERVAL_S": "0.5",
            # The tests' embedder (no model to load): the server drafts as the tests do.
            "LIFECYCLE_EMBEDDER": os.environ.get("LIFECYCLE_EMBEDDER", "hashing"),
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


class Pages:
    """One browser on the console: navigation, forms by their labels, screenshots."""

    def __init__(self, driver: Any, base: str, shots: Path) -> None:
        self.driver, self.base, self.shots = driver, base, shots
        self.saved: list[str] = []

    def open(self, path: str) -> None:
        self.driver.get(self.base + path)

    def find(self, css: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.CSS_SELECTOR, css)

    def button(self, label: str, within: Any = None) -> Any:
        from selenium.webdriver.common.by import By

        return (within or self.driver).find_element(
            By.XPATH, f".//button[normalize-space()='{label}']"
        )

    def link(self, label: str) -> Any:
        from selenium.webdriver.common.by import By

        return self.driver.find_element(By.PARTIAL_LINK_TEXT, label)

    def fill(self, label_for: str, value: str) -> None:
        field = self.find(f"#{label_for}")
        field.clear()
        field.send_keys(value)

    def text(self) -> str:
        return str(self.find("body").text)

    def wait(self, condition: Callable[[], Any], what: str, timeout_s: float = 90) -> Any:
        deadline = time.monotonic() + scaled(timeout_s)
        while True:
            try:
                value = condition()
            except Exception:  # noqa: BLE001 - a page mid-load: look again
                value = None
            if value:
                return value
            assert time.monotonic() < deadline, (
                f"timed out waiting for {what}; page: {self.text()[:1500]}"
            )
            time.sleep(0.1)  # the next look at the page, not a wait in place of one

    def wait_text(self, needle: str, timeout_s: float = 90) -> None:
        self.wait(lambda: needle in self.text(), repr(needle), timeout_s)

    def shot(self, name: str) -> None:
        """The whole page, at a laptop's width."""
        height = self.driver.execute_script("return Math.max(document.body.scrollHeight, 900)")
        self.driver.set_window_size(1366, min(int(height) + 120, 6000))
        path = self.shots / f"{len(self.saved) + 1:02d}-{name}.png"
        self.driver.save_screenshot(str(path))
        self.driver.set_window_size(1366, 900)
        self.saved.append(path.name)

    def sign_in(self, api_key: str) -> None:
        self.open("/console/login")
        if "Sign out" in self.text():
            self.button("Sign out").click()
            self.wait_text("API key")
        self.fill("api_key", api_key)
        self.button("Sign in").click()
        self.wait_text("My queue")

    def run_status(self) -> str:
        return str(self.find("#run-status").text)


@contextmanager
def console_browser(
    home: Path, shots: str | None = None, extra_env: dict[str, str] | None = None
) -> Iterator[Pages]:
    """A real server on `home` (`uvicorn_server`) and a browser on it; the screenshots go
    to the artifacts directory, in its folder `shots` when named."""
    with uvicorn_server(home, extra_env) as base, chromium_driver() as driver:
        pages = Pages(driver, base, artifacts_dir() / shots if shots else artifacts_dir())
        pages.shots.mkdir(exist_ok=True)
        yield pages


def unlabelled_fields(pages: Pages) -> list[str]:
    """Every visible form field must have a label (screen readers read it)."""
    return list(
        pages.driver.execute_script("""
        return Array.from(document.querySelectorAll('input, select, textarea'))
          .filter(e => e.type !== 'hidden' && !e.closest('label')
                  && !(e.id && document.querySelector('label[for="' + e.id + '"]'))
                  && !e.getAttribute('aria-label'))
          .map(e => e.name);""")
    )
