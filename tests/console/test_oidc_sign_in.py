"""Signing in to the console with a real OIDC provider (oidc-provider-mock, a Flask app run
on a loopback port by the test): the authorization code flow with PKCE through Authlib,
driven with the console's test client and httpx against the provider, as a browser would
follow the redirects. The person's groups map to roles and scopes an admin granted."""

from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from authlib.integrations.starlette_client import StarletteOAuth2App
from fastapi.testclient import TestClient
from httpx2 import Response
from oidc_provider_mock import User, run_server_in_thread

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.console.oidc import FLOW_COOKIE
from orchestrator.console.sessions import SESSION_COOKIE
from orchestrator.service.oidc_access import group_role_history, map_group, unmap_group
from orchestrator.service.roles import roles_of
from tests.console.kit import Browser, key, text

PEOPLE = (
    User(sub="alice", claims={"email": "alice@acme.example", "groups": ["grc-approvers"]}),
    User(sub="bob", claims={"email": "bob@acme.example", "groups": ["grc-readers", "staff"]}),
    User(sub="mallory", claims={"email": "mallory@acme.example", "groups": ["marketing"]}),
)


@pytest.fixture(scope="module")
def provider() -> Iterator[str]:
    with run_server_in_thread(user_claims=PEOPLE) as server:
        yield f"http://localhost:{server.server_port}"


@pytest.fixture
def console(embedded: Path, provider: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[TestClient]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    monkeypatch.setenv("LIFECYCLE_OIDC_ISSUER", provider)
    monkeypatch.setenv("LIFECYCLE_OIDC_CLIENT_ID", "lifecycle-console")
    monkeypatch.setenv("LIFECYCLE_OIDC_CLIENT_SECRET", "console-secret-at-the-provider")
    monkeypatch.setenv("LIFECYCLE_OIDC_TENANT", "acme")
    monkeypatch.setenv("LIFECYCLE_OIDC_PROVIDER_NAME", "Acme SSO")
    reset_settings()
    map_group("acme", "grc-approvers", "approver", ["read", "signal"], actor_id="user:root")
    map_group("acme", "grc-readers", "viewer", ["read"], actor_id="user:root")
    map_group("globex", "marketing", "viewer", ["read"], actor_id="user:root")
    yield TestClient(app)
    reset_settings()


def _at_provider(console: TestClient, next_page: str = "/console/queue") -> str:
    """Start signing in: the console's redirect to the provider's authorization page."""
    login = console.get("/console/login")
    assert "Sign in with Acme SSO" in text(login)
    start = console.get(f"/console/login/oidc?next={next_page}", follow_redirects=False)
    assert start.status_code == 302
    return start.headers["location"]


def _authorize(authorize_url: str, subject: str) -> str:
    """The person signs in at the provider as `subject`: the callback URL it sends them to."""
    query = parse_qs(urlsplit(authorize_url).query)
    assert query["code_challenge_method"] == ["S256"] and query["code_challenge"]
    assert query["state"] and query["nonce"] and query["client_id"] == ["lifecycle-console"]
    answer = httpx.post(authorize_url, data={"sub": subject}, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    back = urlsplit(answer.headers["location"])
    assert back.path == "/console/login/oidc/callback"
    return f"{back.path}?{back.query}"


def _sign_in(console: TestClient, subject: str) -> Response:
    return console.get(_authorize(_at_provider(console), subject), follow_redirects=False)


def test_a_person_whose_group_is_mapped_gets_a_session_with_its_role_and_scopes(
    console: TestClient, provider: str
) -> None:
    signed = _sign_in(console, "alice")

    assert (signed.status_code, signed.headers["location"]) == (303, "/console/queue")
    principal = f"oidc:{urlsplit(provider).netloc}:alice"
    assert f"Signed in as {principal}" in text(console.get("/console/queue"))
    assert roles_of("acme", principal) == ["approver"]
    browser = Browser(console)
    created = browser.post(
        "/console/assessments",
        {"organization_id": "org-1", "name": "FY"},
        from_page="/console/assessments",
    )
    assert created.status_code == 303, "the signal scope mapped to the group applies"
    assert FLOW_COOKIE not in console.cookies


def test_the_scopes_are_only_those_mapped_and_unmapping_ends_the_session(
    console: TestClient, provider: str
) -> None:
    assert _sign_in(console, "bob").status_code == 303
    principal = f"oidc:{urlsplit(provider).netloc}:bob"
    assert roles_of("acme", principal) == ["viewer"]
    # A key of its own: the read-only person is shown no form to take one from.
    refused = Browser(console).post(
        "/console/assessments", {"organization_id": "o", "name": "x", "key": "k-refused"}
    )
    assert refused.status_code == 403
    assert "signal scope; what your groups are mapped to" in text(refused)

    unmap_group("acme", "grc-readers", "viewer", actor_id="user:root", reason="left the team")
    assert console.get("/console/queue", follow_redirects=False).status_code == 303
    assert roles_of("acme", principal) == []
    assert [(e.group, e.action.value, e.reason) for e in group_role_history("acme")][0] == (
        "grc-readers",
        "revoked",
        "left the team",
    )


def test_a_person_whose_groups_map_to_no_role_is_refused_without_a_session(
    console: TestClient,
) -> None:
    refused = _sign_in(console, "mallory")

    assert refused.status_code == 403
    assert "none of your groups is mapped to a role" in text(refused)
    assert SESSION_COOKIE not in console.cookies
    assert console.get("/console/queue", follow_redirects=False).status_code == 303


def test_a_tampered_state_is_refused(console: TestClient) -> None:
    callback = _authorize(_at_provider(console), "alice")
    path, query = callback.split("?", 1)
    params = {k: v[0] for k, v in parse_qs(query).items()}
    params["state"] = params["state"][:-2] + ("xy" if not params["state"].endswith("xy") else "zz")

    refused = console.get(path, params=params, follow_redirects=False)

    assert refused.status_code == 403 and "Sign-in refused" in text(refused)
    assert SESSION_COOKIE not in console.cookies


def test_a_callback_this_browser_did_not_start_is_refused(console: TestClient) -> None:
    callback = _authorize(_at_provider(console), "alice")
    stranger = TestClient(app)

    refused = stranger.get(callback, follow_redirects=False)

    assert refused.status_code == 400 and "not started from this browser" in text(refused)


def test_signing_out_ends_the_session(console: TestClient) -> None:
    assert _sign_in(console, "alice").status_code == 303
    copied = console.cookies.get(SESSION_COOKIE, path="/console")

    out = Browser(console).post("/console/logout", {})

    assert (out.status_code, out.headers["location"]) == (303, "/console/login")
    thief = TestClient(app)
    thief.cookies.set(SESSION_COOKIE, str(copied), path="/console")
    assert thief.get("/console/queue", follow_redirects=False).status_code == 303


def test_without_settings_the_sign_in_page_offers_api_keys_only(client: TestClient) -> None:
    page = client.get("/console/login")

    assert "Sign in with" not in text(page)
    assert client.get("/console/login/oidc", follow_redirects=False).status_code == 404


def test_a_code_issued_to_another_client_is_refused(console: TestClient) -> None:
    """A code the provider issued to another application signs nobody in here, although
    the state is this browser's: the provider refuses to exchange it for this client."""
    authorize_url = _at_provider(console).replace(
        "client_id=lifecycle-console", "client_id=another-application"
    )
    answer = httpx.post(authorize_url, data={"sub": "alice"}, follow_redirects=False)
    back = urlsplit(answer.headers["location"])

    refused = console.get(f"{back.path}?{back.query}", follow_redirects=False)

    assert refused.status_code == 403 and "refused (invalid_grant)" in text(refused)
    assert SESSION_COOKIE not in console.cookies


def test_an_id_token_altered_on_its_way_is_refused(
    console: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The provider's real token answer, its ID token's subject changed after signing:
    Authlib checks the signature against the provider's published keys and refuses it."""
    real = StarletteOAuth2App.fetch_access_token

    async def altered(self: StarletteOAuth2App, **kwargs: Any) -> dict[str, Any]:
        token = dict(await real(self, **kwargs))
        header, payload, signature = str(token["id_token"]).split(".")
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        claims["sub"] = "bob"
        forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
        token["id_token"] = f"{header}.{forged}.{signature}"
        return token

    monkeypatch.setattr(StarletteOAuth2App, "fetch_access_token", altered)

    refused = _sign_in(console, "alice")

    assert refused.status_code == 403 and "ID token was not valid" in text(refused)
    assert SESSION_COOKIE not in console.cookies


def test_an_unreachable_provider_gets_a_page_saying_so(
    console: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    with socket.socket() as probe:  # a loopback port nobody listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("LIFECYCLE_OIDC_ISSUER", f"http://127.0.0.1:{port}")
    reset_settings()

    page = console.get("/console/login/oidc", follow_redirects=False)

    assert page.status_code == 502 and "could not reach the identity provider" in text(page)


def test_an_admin_maps_a_group_on_the_console_and_its_members_can_sign_in(
    console: TestClient, provider: str
) -> None:
    assert _sign_in(console, "mallory").status_code == 403
    admin = TestClient(app)
    assert Browser(admin).sign_in(key("admin", tenant="acme")).status_code == 303
    page = Browser(admin).get("/console/settings/sign-in-groups")
    assert page.status_code == 200 and "grc-approvers" in text(page)

    mapped = Browser(admin).post(
        "/console/settings/sign-in-groups/map",
        {"group": "marketing", "role": "viewer", "scope": ["read"], "reason": "campaign review"},
        from_page="/console/settings/sign-in-groups",
    )

    assert mapped.status_code == 303
    assert "marketing mapped to viewer (read)" in text(admin.get(mapped.headers["location"]))
    assert _sign_in(console, "mallory").status_code == 303
    principal = f"oidc:{urlsplit(provider).netloc}:mallory"
    assert roles_of("acme", principal) == ["viewer"]
    unmapped = Browser(admin).post(
        "/console/settings/sign-in-groups/unmap",
        {"group": "marketing", "role": "viewer"},
        from_page="/console/settings/sign-in-groups",
    )
    assert unmapped.status_code == 303
    assert console.get("/console/queue", follow_redirects=False).status_code == 303
    changes = text(admin.get("/console/settings/sign-in-groups"))
    assert "unmapped marketing viewer" in changes and "campaign review" in changes
