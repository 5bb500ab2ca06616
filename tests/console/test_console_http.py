"""Every console route over HTTP (TestClient), on the embedded default with no worker:
sign-in and sessions, CSRF on every form, tenancy (another tenant's URL is a 404 page),
scopes as the API's, uploads, operator pages, dead letters."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from fastapi.testclient import TestClient

from orchestrator.config.settings import reset_settings
from orchestrator.console.sessions import SESSION_COOKIE, issue_cookie, read_cookie
from orchestrator.db.models import ApprovalEvent, Assessment, InboxSignal
from orchestrator.db.session import transaction
from orchestrator.engine.coordinator import coordinate
from orchestrator.service.apikeys import Principal, authenticate, list_keys, revoke_key
from orchestrator.service.dead_letters import get_dead_letter, list_dead_letters
from orchestrator.service.producer import Actor, get_run
from orchestrator.service.queries import list_signals, list_steps
from tests.console.kit import SAMPLES, Browser, dead_lettered_run, key, text, token

OWNER = Actor(tenant_id="acme", actor_id="user:ana@acme")


def _signed_in(
    client: TestClient, *scopes: str, tenant: str = "acme", principal: str = "user:ana@acme"
) -> Browser:
    browser = Browser(client)
    assert browser.sign_in(key(*scopes, tenant=tenant, principal=principal)).status_code == 303
    return browser


def _count(model: type) -> int:
    from sqlalchemy import func, select

    with transaction() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


# --- sign-in, sessions ---------------------------------------------------------------------


def test_sign_in_sets_an_httponly_samesite_cookie_that_expires(client: TestClient) -> None:
    browser = Browser(client)
    assert (
        browser.get("/console/queue").headers["location"]
        == "/console/login?next=%2Fconsole%2Fqueue"
    )
    signed = browser.sign_in(key("read"))

    assert (signed.status_code, signed.headers["location"]) == (303, "/console/queue")
    cookie = next(
        c for c in signed.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "=")
    )
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Path=/console" in cookie
    assert "Max-Age=28800" in cookie and "Secure" not in cookie
    assert "Signed in as user:ana@acme" in text(browser.get("/console/queue"))
    value = client.cookies[SESSION_COOKIE]
    assert read_cookie(value) is not None
    assert read_cookie(value, now=time.time() + 8 * 3600 + 1) is None, "expired"


def test_behind_tls_the_cookie_is_secure(embedded: object) -> None:
    from orchestrator.api import app

    browser = Browser(TestClient(app, base_url="https://console.example"))
    signed = browser.sign_in(key("read"))
    cookie = next(
        c for c in signed.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE + "=")
    )
    assert "Secure" in cookie


def test_a_wrong_key_a_forged_sign_in_or_a_forged_cookie_get_no_session(client: TestClient) -> None:
    browser = Browser(client)
    wrong = browser.sign_in("lk_nothing.at-all")
    assert wrong.status_code == 401 and "unknown or revoked" in text(wrong)
    forged = client.post("/console/login", data={"api_key": key("read"), "csrf_token": "made-up"})
    assert forged.status_code == 403 and SESSION_COOKIE not in client.cookies
    value, _ = issue_cookie(next(iter([_principal()])))
    payload, mac = value.split(".")
    client.cookies.set(SESSION_COOKIE, f"{payload}.{mac[:-2]}xx", path="/console")
    assert browser.get("/console/queue").status_code == 303


def _principal() -> Principal:
    principal = authenticate(key("read"))
    assert principal is not None
    return principal


def test_sign_out_and_revoking_the_key_end_the_session(client: TestClient) -> None:
    browser = _signed_in(client, "read")
    refused = client.post("/console/logout", follow_redirects=False)
    assert refused.status_code == 403, "signing out is a form with its CSRF token too"
    out = browser.post("/console/logout", {})
    assert (out.status_code, out.headers["location"]) == (303, "/console/login")
    assert browser.get("/console/queue").status_code == 303

    browser = _signed_in(client, "read", principal="user:bo@acme")
    assert browser.get("/console/queue").status_code == 200
    [bo] = [k for k in list_keys("acme") if k.principal == "user:bo@acme"]
    revoke_key(bo.key_id)
    assert browser.get("/console/queue").headers["location"].startswith("/console/login")


def test_a_cookie_copied_before_sign_out_signs_nobody_in_after_it(client: TestClient) -> None:
    browser = _signed_in(client, "read")
    copied = client.cookies.get(SESSION_COOKIE, path="/console")
    assert copied and read_cookie(copied) is not None
    out = browser.post("/console/logout", {})
    assert out.status_code == 303
    thief = TestClient(client.app)
    thief.cookies.set(SESSION_COOKIE, copied, path="/console")
    replayed = thief.get("/console/queue", follow_redirects=False)
    assert replayed.status_code == 303
    assert replayed.headers["location"].startswith("/console/login")
    assert read_cookie(copied) is None, "the session ended on the server"
    again = _signed_in(client, "read")
    assert again.get("/console/queue").status_code == 200, "a new sign-in works"


def test_the_sign_in_page_sends_only_to_console_pages(client: TestClient) -> None:
    browser = Browser(client)
    page = browser.get("/console/login?next=https://evil.example/")
    signed = client.post(
        "/console/login",
        data={
            "api_key": key("read"),
            "csrf_token": token(page.text),
            "next": "https://evil.example/",
        },
        follow_redirects=False,
    )
    assert signed.headers["location"] == "/console/queue"


# --- CSRF, tenancy, scopes -------------------------------------------------------------------


def _routes(run_id: uuid.UUID, assessment_id: uuid.UUID, letter_id: int) -> dict[str, dict]:
    """Every console form, with a body that would act if the CSRF token came along."""
    reason = {"reason": "x", "confirm": "yes", "key": "k" * 12}
    return {
        "/console/assessments": {"organization_id": "acme-org", "name": "Forged", "key": "k" * 12},
        f"/console/assessments/{assessment_id}/start": {"key": "k" * 12},
        f"/console/assessments/{assessment_id}/documents/{uuid.uuid4()}/versions": {},
        f"/console/assessments/{assessment_id}/documents/{uuid.uuid4()}/judgement": {
            "key": "k" * 12,
            "kind": "record",
            "reason": "x",
        },
        f"/console/assessments/{assessment_id}/evidence-requests": {
            "key": "k" * 12,
            "recipient": "it@vendor.example",
            "requirements": "SOC 2 CC6.1",
            "instructions": "x",
            "due_on": "2999-01-01",
        },
        f"/console/evidence-requests/{uuid.uuid4()}/revoke": {},
        f"/console/assessments/{assessment_id}/roster": {
            "key": "k" * 12,
            "name": "Dana",
            "email": "dana@example.org",
            "roles": "owner",
        },
        f"/console/assessments/{assessment_id}/roster/{uuid.uuid4()}/remove": {},
        f"/console/runs/{run_id}/framework": {"key": "k" * 12, "frameworks": "SCF"},
        f"/console/runs/{run_id}/retry": reason,
        f"/console/runs/{run_id}/new-version": {**reason, "artifact_kind": "soa"},
        f"/console/runs/{run_id}/reprocess/plan": {**reason, "step": "ingest_documents"},
        f"/console/runs/{run_id}/reprocess": {**reason, "step": "ingest_documents"},
        f"/console/runs/{run_id}/control/cancel": reason,
        f"/console/runs/{run_id}/control/block": reason,
        f"/console/runs/{run_id}/artifacts/soa/decision": {
            "key": "k" * 12,
            "version": "1",
            "decision": "approved",
            "role": "assessor",
        },
        f"/console/runs/{run_id}/artifacts/soa/amend": {
            "key": "k" * 12,
            "artifact_id": str(uuid.uuid4()),
            "rows": "CC1.1",
            "owner": "Head of IT",
            "reason": "x",
        },
        f"/console/runs/{run_id}/artifacts/soa/claim": {},
        f"/console/runs/{run_id}/artifacts/soa/release": {},
        f"/console/runs/{run_id}/artifacts/soa/comments": {"version": "1", "body": "x"},
        "/console/settings/gates/soa": {"amender_may_approve": "yes", "reason": "x"},
        "/console/settings/sign-in-groups/map": {"group": "g", "role": "approver"},
        "/console/settings/sign-in-groups/unmap": {"group": "g", "role": "approver"},
        f"/console/ops/dead-letters/{letter_id}/replay": reason,
        f"/console/ops/dead-letters/{letter_id}/resolve": reason,
        "/console/logout": {},
    }


def test_every_form_posted_without_its_csrf_token_is_refused(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, letter = dead_lettered_run(OWNER, monkeypatch)
    browser = _signed_in(client, "admin")
    before = (_count(Assessment), _count(InboxSignal), _count(ApprovalEvent))
    for url, body in _routes(run.id, run.assessment_id, letter.id).items():
        refused = client.post(url, data=body, follow_redirects=False)
        assert refused.status_code == 403, url
        assert "Form refused" in text(refused), url
        wrong = client.post(
            url, data={**body, "csrf_token": "not-the-token"}, follow_redirects=False
        )
        assert wrong.status_code == 403, url
    assert (_count(Assessment), _count(InboxSignal), _count(ApprovalEvent)) == before
    assert get_dead_letter(letter.id).pending
    assert browser.get("/console/queue").status_code == 200, "still signed in"


def test_another_tenants_urls_are_404_pages(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, letter = dead_lettered_run(OWNER, monkeypatch)
    other = _signed_in(client, "admin", tenant="globex", principal="user:gus@globex")
    pages = [
        f"/console/assessments/{run.assessment_id}",
        f"/console/runs/{run.id}",
        f"/console/runs/{run.id}/live",
        f"/console/runs/{run.id}/artifacts/soa",
        f"/console/runs/{run.id}/artifacts/report/1/file",
        "/console/runs/not-a-uuid",
        "/console/assessments/12345",
    ]
    for url in pages:
        page = other.get(url)
        assert page.status_code == 404, url
        assert "Not found" in text(page) and str(run.id) not in text(page).replace(
            f"workflow run {run.id} not found", ""
        ), url
    before = (_count(InboxSignal), _count(ApprovalEvent))
    for url, body in _routes(run.id, run.assessment_id, letter.id).items():
        if url in (
            "/console/assessments",
            "/console/logout",
            "/console/settings/gates/soa",
            "/console/settings/sign-in-groups/map",
            "/console/settings/sign-in-groups/unmap",
        ):
            continue  # the tenant's own: nothing of another tenant's is named
        answer = other.post(url, body)
        assert answer.status_code == 404, url
    assert (_count(InboxSignal), _count(ApprovalEvent)) == before
    assert get_dead_letter(letter.id).pending
    assert "No dead letters" in text(other.get("/console/ops/dead-letters"))


def test_actions_need_the_same_scopes_as_the_api(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, letter = dead_lettered_run(OWNER, monkeypatch)
    reader = _signed_in(client, "read", principal="user:rita@acme")
    for url, body in _routes(run.id, run.assessment_id, letter.id).items():
        if url == "/console/logout":
            continue
        answer = reader.post(url, body)
        assert answer.status_code == 403, url
        assert "This needs the" in text(answer), url
    for url in ("/console/ops", "/console/ops/stuck", "/console/ops/dead-letters"):
        assert reader.get(url).status_code == 403, url
    page = text(reader.get(f"/console/runs/{run.id}"))
    assert "Retry the failed step" not in page and "Nothing for you to do" in page
    assert "Operations" not in text(reader.get("/console/queue"))


# --- uploads, operators ----------------------------------------------------------------------


def test_a_bidi_control_in_a_file_name_is_shown_not_obeyed(client: TestClient) -> None:
    browser = _signed_in(client, "read", "signal")
    created = browser.post(
        "/console/assessments",
        {"organization_id": "acme-org", "name": "Names"},
        from_page="/console/assessments",
    )
    page = created.headers["location"]
    name = "invoice\u202egpj.md"
    done = client.post(
        f"{page}/documents",
        data={"csrf_token": token(client.get(page).text)},
        files=[("files", (name, b"# Invoice\n\nPaid.\n", "text/markdown"))],
    )
    assert done.status_code == 200, done.text
    for shown in (done, browser.get(page)):
        assert "invoice[U+202E]gpj.md" in shown.text
        assert "\u202e" not in shown.text


def test_an_over_long_comment_gets_a_page_naming_the_limit(client: TestClient) -> None:
    browser = _signed_in(client, "approve", "read")
    answer = browser.post(
        f"/console/runs/{uuid.uuid4()}/artifacts/soa/comments",
        {"version": "1", "body": "x" * 4001},
    )
    assert answer.status_code == 422, answer.text
    said = text(answer)
    assert "There is no such page" not in said
    assert "The body is too long: at most 4000 characters." in said
    malformed = browser.post("/console/runs/not-an-id/artifacts/soa/comments", {"version": "1"})
    assert malformed.status_code == 404, "a malformed id still names no page"


def test_several_documents_upload_at_once_and_a_refused_one_says_why(client: TestClient) -> None:
    browser = _signed_in(client, "read", "signal")
    created = browser.post(
        "/console/assessments",
        {"organization_id": "acme-org", "name": "Uploads"},
        from_page="/console/assessments",
    )
    page = created.headers["location"]
    samples = sorted(SAMPLES.iterdir())[:2]
    files = [("files", (p.name, p.read_bytes(), "text/markdown")) for p in samples]
    files.append(("files", ("scan.pdf", b"just text, not a PDF", "application/pdf")))
    done = client.post(
        f"{page}/documents", data={"csrf_token": token(client.get(page).text)}, files=files
    )
    assert done.status_code == 200, done.text
    shown = text(done)
    for sample in samples:
        assert f"{sample.name} uploaded" in shown
    assert "scan.pdf refused scan.pdf: declared as application/pdf but the content is" in shown
    listed = text(browser.get(page))
    assert all(f"{s.name} text/markdown waiting for ingestion" in listed for s in samples)
    assert "scan.pdf" not in listed
    again = client.post(
        f"{page}/documents", data={"csrf_token": token(client.get(page).text)}, files=files[:1]
    )
    assert f"{samples[0].name} duplicate" in text(again)
    empty = client.post(f"{page}/documents", data={"csrf_token": token(client.get(page).text)})
    assert empty.status_code == 422 and "Choose one or more files" in text(empty)


def test_an_operator_retries_a_failed_step_after_confirming(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, _ = dead_lettered_run(OWNER, monkeypatch)
    operator = _signed_in(client, "read", "operate", principal="operator:olga@acme")
    page = text(operator.get(f"/console/runs/{run.id}"))
    assert "failed" in page and "Retry the failed step" in page and "job_lost" in page
    unconfirmed = operator.post(
        f"/console/runs/{run.id}/retry",
        {"key": "retry-key-1", "reason": "worker is back"},
        from_page=f"/console/runs/{run.id}",
    )
    assert unconfirmed.status_code == 422 and "Tick the confirmation box" in text(unconfirmed)
    body = {"key": "retry-key-1", "reason": "worker is back", "confirm": "yes"}
    for _ in range(2):  # the same form posted twice: one retry
        done = operator.post(
            f"/console/runs/{run.id}/retry", body, from_page=f"/console/runs/{run.id}"
        )
        assert done.status_code == 303 and "retry" in done.headers["location"]
    retries = [
        s for s in list_signals(OWNER, run.id, limit=200).items if s.type == "step_retry_requested"
    ]
    assert [(s.actor_id, s.payload["reason"]) for s in retries] == [
        ("operator:olga@acme", "worker is back")
    ]
    coordinate(run.id)
    attempts = [
        (s.attempt, s.status) for s in list_steps(OWNER, run.id) if s.step == "ingest_documents"
    ]
    assert attempts == [(1, "failed"), (2, "running")]


def test_dead_letters_are_listed_resolved_and_replayed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    first, letter = dead_lettered_run(OWNER, monkeypatch, "First")
    second, other = dead_lettered_run(OWNER, monkeypatch, "Second")
    operator = _signed_in(client, "read", "operate", principal="operator:olga@acme")
    listed = text(operator.get("/console/ops/dead-letters"))
    assert f"#{letter.id} ingest_documents" in listed and f"#{other.id}" in listed
    assert "lost: no outcome" in listed

    resolved = operator.post(
        f"/console/ops/dead-letters/{letter.id}/resolve",
        {"reason": "assessment abandoned", "confirm": "yes"},
        from_page="/console/ops/dead-letters",
    )
    assert resolved.status_code == 303
    closed = get_dead_letter(letter.id)
    assert (closed.resolved_by, closed.resolution) == ("operator:olga@acme", "assessment abandoned")
    assert [d.id for d in list_dead_letters(tenant_id="acme")] == [other.id]
    assert "resolved by operator:olga@acme" in text(
        operator.get("/console/ops/dead-letters?show=all")
    )
    twice = operator.post(
        f"/console/ops/dead-letters/{letter.id}/replay",
        {"reason": "x", "confirm": "yes"},
        from_page="/console/ops",
    )
    assert twice.status_code == 422 and "was resolved" in text(twice)

    replayed = operator.post(
        f"/console/ops/dead-letters/{other.id}/replay",
        {"reason": "worker restored", "confirm": "yes"},
        from_page="/console/ops/dead-letters",
    )
    assert replayed.headers["location"].startswith(f"/console/runs/{second.id}?notice=")
    assert get_dead_letter(other.id).replayed_at is not None
    assert "No dead letters" in text(operator.get("/console/ops/dead-letters"))


def test_operators_see_runs_by_status_and_step_and_the_stuck_ones(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    failed, _ = dead_lettered_run(OWNER, monkeypatch)
    operator = _signed_in(client, "read", "operate")
    overview = text(operator.get("/console/ops"))
    assert "failed ingest_documents 1" in overview
    filtered = text(operator.get("/console/runs?status=failed&step=ingest_documents"))
    assert str(failed.id) in filtered
    assert str(failed.id) not in text(operator.get("/console/runs?status=completed"))

    assert "Nothing looks stuck" in text(operator.get("/console/ops/stuck"))
    monkeypatch.setenv("LIFECYCLE_CONSOLE_STUCK_AFTER_S", "0.001")
    reset_settings()
    stuck = text(operator.get("/console/ops/stuck"))
    assert f"{failed.id} failed ingest_documents unchanged past the threshold" in stuck


def test_a_queued_job_with_no_consumer_is_stuck(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    from orchestrator.service.documents import upload_document
    from orchestrator.service.producer import create_assessment, start_lifecycle
    from tests.console.kit import _no_kick, wait_for

    assessment = create_assessment(OWNER, "acme-org", "Queued")
    sample = sorted(SAMPLES.iterdir())[0]
    upload_document(OWNER, assessment.id, sample.name, sample.read_bytes(), kick=_no_kick)
    run = start_lifecycle(OWNER, assessment.id, "queued-1", kick=_no_kick)
    wait_for(
        lambda: coordinate(run.id) and get_run(OWNER, run.id).current_step == "ingest_documents",
        "the ingestion job queued",
        10,
    )
    monkeypatch.setenv("LIFECYCLE_CONSOLE_STUCK_AFTER_S", "0.001")
    reset_settings()
    operator = _signed_in(client, "read", "operate")
    stuck = text(operator.get("/console/ops/stuck"))
    assert f"job {run.id}:ingest_documents:1 queued on ingestion with no consumer" in stuck


def test_every_answer_says_nosniff(client: TestClient) -> None:
    """API answers and problems, console pages, redirects and error pages, static files."""
    browser = _signed_in(client, "admin")
    headers = {"Authorization": f"Bearer {key('read')}"}
    answers = [
        client.get("/api/v1/assessments", headers=headers),
        client.get("/api/v1/assessments"),
        client.get("/api/v1/assessments/not-an-id", headers=headers),
        client.get("/openapi.json"),
        client.get("/docs"),
        client.get("/console/login"),
        browser.get("/console/queue"),
        browser.get("/console/no-such-page"),
        client.get("/console/queue", follow_redirects=False),
        client.get("/console/static/console.css"),
        client.get("/console/static/console.js"),
        client.get("/console/static/missing.css"),
        client.get("/healthz"),
    ]
    for answer in answers:
        assert answer.headers.get("x-content-type-options") == "nosniff", answer.url


def test_pages_use_only_the_apps_own_assets(client: TestClient) -> None:
    browser = _signed_in(client, "admin")
    css = client.get("/console/static/console.css")
    script = client.get("/console/static/console.js")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    for url in ("/console/login", "/console/queue", "/console/assessments", "/console/ops"):
        page = browser.get(url)
        assert "http://" not in page.text and "https://" not in page.text, url
        assert page.headers["cache-control"] == "no-store"
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert '<main id="main"' in page.text and "<h1>" in page.text, url


# --- webhooks of run transitions -------------------------------------------------------


def test_a_failed_run_is_told_once_and_only_to_subscribers(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No worker here: the deliveries are made one by one, as the sweep would."""
    from sqlalchemy import select

    from orchestrator.db.ops_models import Notification, NotificationDelivery
    from orchestrator.db.session import transaction
    from orchestrator.notifications import signing
    from orchestrator.notifications.delivery import deliver
    from orchestrator.notifications.subscriptions import subscribe
    from tests.support.webhook_receiver import webhook_receiver

    secret = "s" * 32

    quiet, _ = dead_lettered_run(OWNER, monkeypatch, "Nobody listens")
    with transaction() as session:
        told = session.scalars(select(Notification.event_type)).all()
        assert [t for t in told if t.startswith("run.")] == [], (
            "a tenant with no subscription gets no rows of run events"
        )
    with webhook_receiver() as receiver:
        subscribe(OWNER, receiver.url, ["run.failed"], secret=secret)
        failed, _ = dead_lettered_run(OWNER, monkeypatch, "Fails")
        with transaction() as session:
            deliveries = list(session.scalars(select(NotificationDelivery.id)))
        for delivery_id in deliveries:
            deliver(delivery_id)
            assert deliver(delivery_id) is None, "delivered once"
    [post] = receiver.received
    signing.verify(secret, post.headers[signing.SIGNATURE_HEADER], post.body)
    told = json.loads(post.body)
    assert (told["type"], told["run_id"]) == ("run.failed", str(failed.id))
    assert told["data"]["step"] == "ingest_documents"
    assert told["data"]["console_url"].endswith(f"/console/runs/{failed.id}")
    assert quiet.id != failed.id


def test_the_engine_tells_only_events_a_tenant_can_subscribe_to() -> None:
    from orchestrator.contracts.events import RUN_EVENTS, NotificationEvent
    from orchestrator.engine import run_events

    told = set(run_events._EVENTS.values()) | {NotificationEvent.APPROVAL_REQUESTED}
    assert told == RUN_EVENTS
