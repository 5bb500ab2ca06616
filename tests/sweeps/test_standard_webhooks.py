"""Webhooks in the Standard Webhooks format: a receiver verifies our deliveries and our
export requests with that project's own library (`standardwebhooks`), with a secret we made
(`whsec_` and base64) and with a secret made before that format (its bytes)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from standardwebhooks import Webhook, WebhookVerificationError

from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.events import NotificationEvent, event_id
from orchestrator.db.session import transaction
from orchestrator.engine.tenant_events import notify
from orchestrator.notifications import signing
from orchestrator.notifications.delivery import DeliveryStatus, deliver
from orchestrator.notifications.subscriptions import subscribe
from tests.support.sweeps import Clock, installed_clock, new_tenant
from tests.support.webhook_receiver import Received, webhook_receiver

OLD_SECRET = "s" * 32


@pytest.fixture
def now(embedded: Path) -> Iterator[Clock]:
    """The real time: the library refuses a timestamp five minutes from its own clock."""
    yield from installed_clock(datetime.now(UTC))


def _delivered(secret: str | None, occasion: str) -> tuple[str, Received]:
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        subscription = subscribe(owner, receiver.url, secret=secret)
        with transaction() as session:
            [delivery_id] = notify(
                session,
                event_id=event_id(occasion),
                tenant_id=owner.tenant_id,
                run_id=uuid.uuid4(),
                event=NotificationEvent.RUN_STALE,
                payload={"n": 1},
                now=utcnow(),
            )
        assert deliver(delivery_id) is DeliveryStatus.DELIVERED
    assert subscription.secret is not None
    [post] = receiver.received
    return subscription.secret, post


def test_the_standard_library_verifies_a_delivery_signed_with_a_new_secret(now: Clock) -> None:
    secret, post = _delivered(None, "standard-1")
    assert secret.startswith("whsec_")
    document = Webhook(secret).verify(post.body, post.headers)
    assert document == json.loads(post.body)
    headers = {name.lower(): value for name, value in post.headers.items()}
    assert headers["webhook-id"] == document["id"] == str(event_id("standard-1"))
    assert headers["webhook-signature"].startswith("v1,")
    with pytest.raises(WebhookVerificationError):
        Webhook(secret).verify(post.body + b" ", post.headers)
    with pytest.raises(WebhookVerificationError):
        Webhook(signing.new_secret()).verify(post.body, post.headers)
    # The earlier headers, which the docs promise, still verify too.
    signing.verify(secret, post.headers[signing.SIGNATURE_HEADER], post.body)
    assert post.headers[signing.EVENT_TYPE_HEADER] == "run.stale"


def test_a_secret_made_before_the_format_signs_with_its_bytes(now: Clock) -> None:
    secret, post = _delivered(OLD_SECRET, "standard-2")
    assert Webhook(secret.encode()).verify(post.body, post.headers)["type"] == "run.stale"


def test_export_requests_carry_the_same_headers() -> None:
    secret = signing.new_secret()
    body = b'{"id":"e1","type":"export.published"}'
    stamp = int(datetime.now(UTC).timestamp())
    headers = signing.signed_headers(secret, "effect-1", "export.published", body, stamp)
    assert Webhook(secret).verify(body, headers)["type"] == "export.published"
    assert headers["webhook-timestamp"] == str(stamp)
