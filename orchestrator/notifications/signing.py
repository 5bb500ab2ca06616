"""Webhook signatures in the Standard Webhooks format (https://www.standardwebhooks.com),
so a receiver verifies them with that project's libraries:

    webhook-id: <event id>   webhook-timestamp: <unix seconds>
    webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<timestamp>.<body>">

keyed with the secret's bytes: base64-decoded after `whsec_` (new secrets have that form),
or a secret made before it as its UTF-8 bytes. The earlier headers stay beside them, as
docs/operating.md and docs/engine.md promise: `X-Lifecycle-Event-Id`,
`X-Lifecycle-Event-Type` and `X-Lifecycle-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256
of "<timestamp>.<body>" keyed with the secret string>`. A receiver refuses a timestamp too
far from its own clock (replay).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
import time

from orchestrator.contracts.errors import FleetError

SIGNATURE_HEADER = "X-Lifecycle-Signature"
EVENT_ID_HEADER = "X-Lifecycle-Event-Id"
EVENT_TYPE_HEADER = "X-Lifecycle-Event-Type"
WEBHOOK_ID_HEADER = "webhook-id"
WEBHOOK_TIMESTAMP_HEADER = "webhook-timestamp"
WEBHOOK_SIGNATURE_HEADER = "webhook-signature"
SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_S = 300


class InvalidSignature(FleetError, ValueError):
    """The signature header is missing, malformed, stale or does not match."""


def digest(secret: str, timestamp: int, body: bytes) -> str:
    message = str(timestamp).encode() + b"." + body
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()


def sign(secret: str, body: bytes, timestamp: int) -> str:
    return f"t={timestamp},v1={digest(secret, timestamp, body)}"


def verify(
    secret: str,
    header: str,
    body: bytes,
    *,
    now: float | None = None,
    tolerance_s: int = DEFAULT_TOLERANCE_S,
) -> None:
    """Raise InvalidSignature unless `header` signs `body` with `secret`, recently."""
    parts = dict(part.split("=", 1) for part in header.split(",") if "=" in part)
    try:
        timestamp = int(parts["t"])
        given = parts["v1"]
    except (KeyError, ValueError) as error:
        raise InvalidSignature("malformed signature header") from error
    current = time.time() if now is None else now
    if abs(current - timestamp) > tolerance_s:
        raise InvalidSignature("signature timestamp outside the tolerance")
    if not hmac.compare_digest(given, digest(secret, timestamp, body)):
        raise InvalidSignature("signature does not match")


def new_secret() -> str:
    """A Standard Webhooks secret: `whsec_` and 32 random bytes in base64."""
    return SECRET_PREFIX + base64.b64encode(secrets.token_bytes(32)).decode()


def secret_key(secret: str) -> bytes:
    if secret.startswith(SECRET_PREFIX):
        try:
            return base64.b64decode(secret.removeprefix(SECRET_PREFIX), validate=True)
        except binascii.Error:
            pass  # not base64 after all: signed with as given, as older secrets are
    return secret.encode()


def standard_signature(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    signed = f"{message_id}.{timestamp}.".encode() + body
    mac = hmac.new(secret_key(secret), signed, hashlib.sha256).digest()
    return f"v1,{base64.b64encode(mac).decode()}"


def signed_headers(
    secret: str, message_id: str, event_type: str, body: bytes, timestamp: int
) -> dict[str, str]:
    """The headers that sign one POST of `body`: the standard ones and the earlier ones."""
    return {
        WEBHOOK_ID_HEADER: message_id,
        WEBHOOK_TIMESTAMP_HEADER: str(timestamp),
        WEBHOOK_SIGNATURE_HEADER: standard_signature(secret, message_id, timestamp, body),
        EVENT_ID_HEADER: message_id,
        EVENT_TYPE_HEADER: event_type,
        SIGNATURE_HEADER: sign(secret, body, timestamp),
    }
