"""Signing in with the OIDC identity provider: Authlib's client does the protocol.

The authorization code flow with PKCE (S256), a state and a nonce; Authlib reads the
provider's discovery document, exchanges the code and validates the ID token (signature by
the provider's published keys, issuer, audience, expiry, nonce). What Authlib keeps between
the redirect and the callback (state, nonce, PKCE verifier) lives in a short-lived cookie
signed with the console's secret, instead of a server-side session middleware: the same
browser must come back with it, and a state it did not start is refused.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from functools import lru_cache
from typing import Any, cast

from authlib.integrations.starlette_client import OAuth, StarletteOAuth2App
from fastapi import Request

from orchestrator.config.oidc import OidcSettings
from orchestrator.config.settings import get_settings
from orchestrator.console.settings import signing_secret

#: The cookie carrying the flow's state between the redirect and the callback.
FLOW_COOKIE = "lifecycle_console_oidc"
#: How long a person has at the provider before the flow's state lapses.
FLOW_TTL_S = 600


def oidc_settings() -> OidcSettings:
    return get_settings().oidc


@lru_cache(maxsize=2)
def _client(
    issuer: str, client_id: str, client_secret: str | None, scopes: str
) -> StarletteOAuth2App:
    # One client per configuration: it keeps the discovery document and the keys it fetched.
    oauth = OAuth()
    oauth.register(
        name="idp",
        client_id=client_id,
        client_secret=client_secret,
        server_metadata_url=issuer.rstrip("/") + "/.well-known/openid-configuration",
        client_kwargs={"scope": scopes, "code_challenge_method": "S256"},
    )
    return cast(StarletteOAuth2App, oauth.create_client("idp"))


def client(settings: OidcSettings) -> StarletteOAuth2App:
    assert settings.issuer and settings.client_id
    return _client(settings.issuer, settings.client_id, settings.client_secret, settings.scopes)


def _mac(payload: str) -> str:
    digest = hmac.new(signing_secret(), f"oidc-flow:{payload}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def flow_cookie(state: dict[str, Any], next_page: str) -> str:
    """The signed cookie value carrying Authlib's flow state and where to go afterwards."""
    body = json.dumps(
        {"flow": state, "next": next_page, "e": int(time.time()) + FLOW_TTL_S},
        separators=(",", ":"),
    )
    payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
    return f"{payload}.{_mac(payload)}"


def read_flow_cookie(value: str | None) -> tuple[dict[str, Any], str] | None:
    """The flow state and next page a cookie carries; None if forged, lapsed or absent."""
    if not value or value.count(".") != 1 or len(value) > 4096:
        return None
    payload, mac = value.split(".")
    if not hmac.compare_digest(mac, _mac(payload)):
        return None
    try:
        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        state, next_page, expires = dict(body["flow"]), str(body["next"]), float(body["e"])
    except (ValueError, KeyError, TypeError):
        return None
    return (state, next_page) if expires > time.time() else None


def use_flow_state(request: Request, state: dict[str, Any]) -> dict[str, Any]:
    """Give Authlib's Starlette client `state` as the request's session (what it reads and
    writes the flow's state in), and return it."""
    request.scope["session"] = state
    return state


def groups_of(userinfo: dict[str, Any], claim: str) -> list[str]:
    """The person's groups from the ID token's claim: a list, or one string."""
    value = userinfo.get(claim)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [str(group) for group in value if isinstance(group, str | int)]
    return []
