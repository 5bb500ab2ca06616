"""Signed-in sessions and CSRF tokens.

Signing in checks the API key once; the cookie then carries the key's id, an expiry and a
random session id, signed with HMAC. Each request reloads the key by id, so revoking the
key ends its sessions at once. A person signed in with the identity provider has no key:
their cookie carries their principal instead, and each request reads what their groups map
to now, so unmapping their groups ends their sessions at once too. Signing out records the
session id as ended on the server, so a copy of the cookie signs nobody in afterwards. The
CSRF token of a session is an HMAC of its session id: every form carries it and every POST
must send it back. Before sign-in, the sign-in form uses a double-submit cookie instead.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass

from orchestrator.console.settings import get_console_settings, signing_secret
from orchestrator.service.apikeys import Principal, principal_of_key
from orchestrator.service.console_sessions import session_ended
from orchestrator.service.oidc_access import NO_KEY, principal_of_identity

SESSION_COOKIE = "lifecycle_console"
LOGIN_CSRF_COOKIE = "lifecycle_console_login"


@dataclass(frozen=True)
class ConsoleSession:
    principal: Principal
    session_id: str
    expires_at: float

    @property
    def csrf_token(self) -> str:
        return _mac(f"csrf:{self.session_id}")


def _mac(message: str) -> str:
    digest = hmac.new(signing_secret(), message.encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def issue_cookie(principal: Principal, now: float | None = None) -> tuple[str, int]:
    """The cookie value of a new session, and its lifetime in seconds."""
    ttl = get_console_settings().session_ttl_s
    who = {"k": principal.key_id} if principal.key_id != NO_KEY else {"o": principal.principal}
    body = {
        **who,
        "s": secrets.token_urlsafe(18),
        "e": int((now or time.time()) + ttl),
    }
    payload = (
        base64.urlsafe_b64encode(json.dumps(body, separators=(",", ":")).encode())
        .decode()
        .rstrip("=")
    )
    return f"{payload}.{_mac('session:' + payload)}", ttl


def read_cookie(value: str | None, now: float | None = None) -> ConsoleSession | None:
    """The session a cookie names, or None if it is forged, expired, signed out or its key
    revoked."""
    if not value or value.count(".") != 1 or len(value) > 1024:
        return None
    payload, mac = value.split(".")
    if not hmac.compare_digest(mac, _mac("session:" + payload)):
        return None
    try:
        body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        session_id, expires = str(body["s"]), float(body["e"])
        key_id, person = body.get("k"), body.get("o")
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    if expires <= (now or time.time()):
        return None
    if isinstance(key_id, str) and key_id:
        principal = principal_of_key(key_id)
    elif isinstance(person, str) and person:
        principal = principal_of_identity(person)
    else:
        return None
    if principal is None or session_ended(session_id):
        return None
    return ConsoleSession(principal, session_id, expires)


def new_login_token() -> str:
    return secrets.token_urlsafe(24)


def same_token(expected: str | None, given: str | None) -> bool:
    return bool(expected) and bool(given) and hmac.compare_digest(str(expected), str(given))
