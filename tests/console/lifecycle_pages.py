"""A lifecycle driven through the console's pages over HTTP, as a person would: people
with their own cookie jars, forms posted with their own keys, a run taken to its SoA wait,
and the rows a gate needs decided set in one amendment by a colleague."""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Callable

from fastapi.testclient import TestClient

from orchestrator.service.producer import Actor, get_run
from tests.console.kit import SAMPLES, Browser, key, text, token, wait_for


def person(client: TestClient, tenant: str, *scopes: str, principal: str) -> Browser:
    # Each person gets a client of their own: their own cookie jar.
    browser = Browser(TestClient(client.app))
    assert browser.sign_in(key(*scopes, tenant=tenant, principal=principal)).status_code == 303
    return browser


def form_key(page: str, action: str) -> str:
    form = page[page.index(f'action="{action}"') :]
    found = re.search(r'name="key" value="([^"]+)"', form)
    assert found, f"no key in the form {action}"
    return found.group(1)


def wait_status(tenant: str, run_id: uuid.UUID, *statuses: str) -> None:
    actor = Actor(tenant_id=tenant, actor_id="test")
    last = get_run(actor, run_id)

    def reached() -> bool:
        nonlocal last
        last = get_run(actor, run_id)
        return last.status in statuses

    try:
        wait_for(reached, f"the run {statuses}", 180)
    except AssertionError as error:
        said = f"{error}; it is {last.status} at {last.current_step}: {last.reason}"
        raise AssertionError(said) from error


_UNDECIDED = re.compile(r'id="undecided-count"[^>]*>(\d+) of (\d+) undecided')
#: What a colleague sets on every undecided row, in one amendment through the page's form.
_DECISIONS = {"soa": {"implementation_status": "partially_implemented"}, "poam": {"owner": "CISO"}}


def decide_undecided(
    colleague: Browser, tenant: str, run_url: str, run_id: uuid.UUID, gate: str, version: int
) -> bool:
    """Where the gate refuses approvals of undecided rows, a colleague (not the approver:
    whoever amends may not approve) sets them all with the page's "every row matching the
    filter" amendment; True once the run waits for the amended version."""
    review_url = f"{run_url}/artifacts/{gate}"
    page = colleague.get(f"{review_url}?version={version}&{_decided_slug(gate)}.undecided=1").text
    found = _UNDECIDED.search(page)
    if gate not in _DECISIONS or found is None or found.group(1) == "0":
        return False
    filtered = re.search(r"name=\"filter\" value='([^']+)'", page)
    assert filtered and json.loads(filtered.group(1)) == {"undecided": True}
    artifact_id = re.search(r'name="artifact_id" value="([^"]+)"', page)
    assert artifact_id
    done = colleague.post(
        f"{review_url}/amend",
        {
            "key": form_key(page, f"{review_url}/amend"),
            "artifact_id": artifact_id.group(1),
            "target": "filter",
            "filter": filtered.group(1),
            "reason": "decided in the review meeting",
            **_DECISIONS[gate],
        },
        from_page=review_url,
    )
    assert done.status_code == 303, text(done)
    actor = Actor(tenant_id=tenant, actor_id="t")
    wait_for(
        lambda: get_run(actor, run_id).context["artifacts"].get(gate) == version + 1,
        f"the run to wait for {gate} v{version + 1}",
    )
    amended = text(colleague.get(f"{review_url}?version={version + 1}"))
    assert f"0 of {found.group(2)} undecided" in amended
    assert "Needs another reviewer" in amended, "who amended it may not approve it"
    return True


def _decided_slug(gate: str) -> str:
    return {"soa": "requirements", "poam": "items"}.get(gate, "rows")


def run_at_soa_wait(
    owner: Browser,
    tenant: str,
    name: str,
    before_start: Callable[[str], None] | None = None,
) -> tuple[str, uuid.UUID]:
    """An assessment created, a document uploaded, the run started and its framework
    selected, all through the pages; returns the run's page once the SoA waits.
    `before_start` is given the assessment's page once the document is uploaded."""
    created = owner.post(
        "/console/assessments",
        {"organization_id": "org-y", "name": name},
        from_page="/console/assessments",
    )
    page_url = created.headers["location"]
    sample = sorted(SAMPLES.iterdir())[0]
    page = owner.client.get(page_url).text
    owner.client.post(
        f"{page_url}/documents",
        files=[("files", (sample.name, sample.read_bytes(), "text/markdown"))],
        data={"csrf_token": token(page)},
    )
    if before_start is not None:
        before_start(page_url)
    page = owner.client.get(page_url).text
    run_url = owner.post(
        f"{page_url}/start", {"key": form_key(page, page_url + "/start")}, from_page=page_url
    ).headers["location"]
    run_id = uuid.UUID(run_url.rsplit("/", 1)[1])
    wait_status(tenant, run_id, "waiting_for_input")
    page = owner.get(run_url).text
    owner.post(
        f"{run_url}/framework",
        {"key": form_key(page, f"{run_url}/framework"), "frameworks": "SOC 2"},
        from_page=run_url,
    )
    wait_status(tenant, run_id, "waiting_for_approval")
    return run_url, run_id
