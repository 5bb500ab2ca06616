"""Using the console as a browser would, over HTTP: sign in, read a page's CSRF token,
post its forms. And a run whose ingestion job was given up on (a dead letter), made
with the fleet's own coordinator and lost-jobs sweep, with no worker running."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from httpx2 import Response

from orchestrator.config.settings import reset_settings
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.apikeys import create_key
from orchestrator.service.dead_letters import DeadLetterView, list_dead_letters
from orchestrator.service.documents import upload_document
from orchestrator.service.producer import Actor, create_assessment, get_run, start_lifecycle
from orchestrator.service.read_models import RunView
from orchestrator.sweeps.lost_jobs import recover_lost_jobs
from tests.support.polling import poll

SAMPLES = Path(__file__).resolve().parents[2] / "orchestrator" / "demo" / "samples"
_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
_KEY = re.compile(r'name="key" value="([^"]+)"')


def key(
    *scopes: str,
    tenant: str = "acme",
    principal: str = "user:ana@acme",
    organizations: list[str] | None = None,
) -> str:
    return create_key(tenant, principal, scopes or ("admin",), organizations=organizations)[1]


class Browser:
    """One person's cookie jar on the console."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def sign_in(self, api_key: str) -> Response:
        page = self.client.get("/console/login")
        return self.client.post(
            "/console/login",
            data={"api_key": api_key, "csrf_token": token(page.text), "next": "/console/queue"},
            follow_redirects=False,
        )

    def get(self, url: str, **kwargs: Any) -> Response:
        return self.client.get(url, follow_redirects=False, **kwargs)

    def post(
        self, url: str, data: dict[str, Any], *, from_page: str | None = None, **kwargs: Any
    ) -> Response:
        """Post a form the way a page would: with the CSRF token of a console page, and the
        key the page minted for the form posting to `url`, when it has one."""
        page = self.client.get(from_page or "/console/queue")
        minted = form_key(page.text, url)
        sent = {"csrf_token": token(page.text), **({"key": minted} if minted else {}), **data}
        return self.client.post(url, data=sent, follow_redirects=False, **kwargs)


def token(page: str) -> str:
    found = _CSRF.search(page)
    assert found, "the page carries no CSRF token"
    return html.unescape(found.group(1))


def form_key(page: str, action: str) -> str | None:
    """The hidden `key` of the page's form posting to `action`: what makes it act once."""
    for form in re.finditer(r"<form\b([^>]*)>(.*?)</form>", page, re.S):
        if f'action="{html.escape(action)}"' in form.group(1):
            found = _KEY.search(form.group(2))
            return html.unescape(found.group(1)) if found else None
    return None


def text(response: Response) -> str:
    """A page's visible text, roughly: tags out, whitespace folded."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", response.text)).split())


def wait_for(condition: Callable[[], Any], what: str, timeout_s: float = 60) -> Any:
    """What `condition` returned once it was truthy (the suite's poll: the CI time scale
    applies)."""
    return poll(condition, bool, timeout_s=timeout_s, what=what)


def _no_kick(_: uuid.UUID) -> None:
    """Nothing consumes here: the test runs the coordinator itself."""


def dead_lettered_run(
    owner: Actor, monkeypatch: pytest.MonkeyPatch, name: str = "Lost ingestion"
) -> tuple[RunView, DeadLetterView]:
    """A run failed at ingest_documents because its job was never consumed: the lost-jobs
    sweep gave up on it at once (no re-dispatch) and dead-lettered it."""
    assessment = create_assessment(owner, "acme-org", name)
    sample = sorted(SAMPLES.iterdir())[0]
    upload_document(owner, assessment.id, sample.name, sample.read_bytes(), kick=_no_kick)
    run = start_lifecycle(owner, assessment.id, f"lost-{uuid.uuid4()}", kick=_no_kick)
    wait_for(
        lambda: coordinate(run.id) and get_run(owner, run.id).current_step == "ingest_documents",
        "the ingestion job to be queued",
        10,
    )
    with monkeypatch.context() as patch:
        patch.setenv("LIFECYCLE_SWEEP_REDISPATCH_LIMIT", "0")
        patch.setenv("LIFECYCLE_SWEEP_QUEUED_DEADLINE_S", "0.001")
        reset_settings()
        wait_for(lambda: recover_lost_jobs().dead_lettered == 1, "the job dead-lettered", 10)
    reset_settings()
    coordinate(run.id)
    failed = get_run(owner, run.id)
    assert failed.status == "failed", failed
    [letter] = list_dead_letters(run_id=run.id)
    return failed, letter
