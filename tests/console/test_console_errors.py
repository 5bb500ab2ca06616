"""The console answers its own HTML page when something fails: never a raw error, and a
failed form says whether it may have been applied and where to check."""

from __future__ import annotations

import uuid

import pytest
from fastapi.testclient import TestClient

from orchestrator.console import pages_runs
from orchestrator.contracts.errors import DatabaseBusy
from tests.console.kit import Browser, key, text


def _signed_in(client: TestClient) -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key("admin")).status_code == 303
    return browser


def test_an_unexpected_error_on_a_page_is_the_consoles_500_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = _signed_in(client)

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(pages_runs, "list_runs", broken)
    page = browser.get("/console/runs")
    assert page.status_code == 500
    assert page.headers["content-type"].startswith("text/html")
    assert "Something went wrong" in text(page) and "disk on fire" not in page.text
    assert "Nothing was changed" in text(page)


def test_a_form_that_finds_the_database_busy_says_to_check_the_run_page(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    browser = _signed_in(client)
    run_id = uuid.uuid4()

    def busy(*_: object, **__: object) -> None:
        raise DatabaseBusy("the database stayed busy")

    monkeypatch.setattr(pages_runs.operations, "retry_step", busy)
    page = browser.post(
        f"/console/runs/{run_id}/retry",
        {"key": "k" * 16, "step": "ingest_documents", "reason": "again", "confirm": "yes"},
        from_page="/console/queue",
    )
    assert page.status_code == 503, page.text
    assert page.headers["content-type"].startswith("text/html")
    assert "may or may not have been applied" in text(page)
    assert f'href="/console/runs/{run_id}"' in page.text


def test_what_no_route_answers_is_a_console_page(client: TestClient) -> None:
    _signed_in(client)
    for method, url, status in (
        ("GET", "/console/no-such-page", 404),
        ("POST", "/console/queue", 405),
        ("GET", "/console/static/missing.css", 404),
    ):
        answer = client.request(method, url)
        assert answer.status_code == status, url
        assert answer.headers["content-type"].startswith("text/html"), url
        assert not answer.text.lstrip().startswith("{"), url
        assert "Back to my queue" in text(answer), url
    assert "There is no such page in the console." in text(client.get("/console/no-such-page"))
    api = client.get("/api/v1/no-such-thing")
    assert api.headers["content-type"].startswith("application/problem+json"), "the API stays JSON"
