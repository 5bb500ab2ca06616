"""Webhook signatures: HMAC-SHA256 over "<unix timestamp>.<body>", with the timestamp.

Header: `X-Lifecycle-Signature: t=<unix seconds>,v1=<hex digest>`. A receiver recomputes
the digest with its secret and refuses a timestamp too far from its own clock (replay).
"""

from __future__ import annotations

import hashlib
import hmac
import time

from orchestrator.contracts.errors import FleetError

SIGNATURE_HEADER = "X-Lifecycle-Signature"
EVENT_ID_HEADER = "X-Lifecycle-Event-Id"
EVENT_TYPE_HEADER = "X-Lifecycle-Event-Type"
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
