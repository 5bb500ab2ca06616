"""Webhooks: per-tenant subscriptions, signed bodies, retries with backoff, dedupe."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from sqlalchemy import event, select, update

from orchestrator.contracts.errors import InvalidInput, NotFound
from orchestrator.contracts.events import event_id
from orchestrator.contracts.identity import Actor
from orchestrator.db.ops_models import Notification, NotificationDelivery
from orchestrator.db.session import get_engine, transaction
from orchestrator.notifications import signing
from orchestrator.notifications.delivery import DeliveryStatus, deliver
from orchestrator.notifications.subscriptions import deactivate, list_subscriptions, subscribe
from orchestrator.notifications.sweep import sweep_deliveries
from tests.support.sweeps import (
    Clock,
    count,
    delivery_attempts,
    drive_to,
    new_tenant,
    notify_stale,
    start_run,
)
from tests.support.webhook_receiver import webhook_receiver

SECRET = "s" * 32


def test_signature_round_trip_and_every_way_it_fails() -> None:
    body = b'{"id":"e1"}'
    header = signing.sign(SECRET, body, timestamp=1_900_000_000)
    signing.verify(SECRET, header, body, now=1_900_000_100)
    with pytest.raises(signing.InvalidSignature, match="does not match"):
        signing.verify(SECRET, header, body + b" ", now=1_900_000_100)
    with pytest.raises(signing.InvalidSignature, match="does not match"):
        signing.verify("t" * 32, header, body, now=1_900_000_100)
    with pytest.raises(signing.InvalidSignature, match="tolerance"):
        signing.verify(SECRET, header, body, now=1_900_000_301)
    with pytest.raises(signing.InvalidSignature, match="malformed"):
        signing.verify(SECRET, "v1=abc", body, now=1_900_000_000)


def test_subscriptions_are_validated_and_tenant_scoped(embedded: object) -> None:
    owner, _ = new_tenant()
    for bad in ("ftp://example.org/x", "https:///nohost", "https://u:p@example.org/x"):
        with pytest.raises(InvalidInput):
            subscribe(owner, bad)
    with pytest.raises(InvalidInput, match="unknown event types: run.exploded"):
        subscribe(owner, "https://example.org/a", ["run.exploded"])
    with pytest.raises(InvalidInput, match="at least 24"):
        subscribe(owner, "https://example.org/a", secret="short")
    created = subscribe(owner, "https://example.org/a", ["run.stale"])
    assert created.secret and len(created.secret) >= 32
    with pytest.raises(InvalidInput, match="already subscribed"):
        subscribe(owner, "https://example.org/a")
    stranger = Actor("another-tenant", "user:x")
    assert list_subscriptions(stranger) == []
    with pytest.raises(NotFound):
        deactivate(stranger, created.id)
    [listed] = list_subscriptions(owner)
    assert listed.secret is None and listed.event_types == ["run.stale"]


def test_a_delivery_is_signed_and_recorded(clock: Clock) -> None:
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        subscription = subscribe(owner, receiver.url, secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "occasion-1")
        assert deliver(delivery_id) is DeliveryStatus.DELIVERED
    [post] = receiver.received
    signing.verify(
        SECRET, post.headers[signing.SIGNATURE_HEADER], post.body, now=clock.now.timestamp()
    )
    document = json.loads(post.body)
    assert document["id"] == post.headers[signing.EVENT_ID_HEADER] == str(event_id("occasion-1"))
    assert document["type"] == "run.stale" and document["data"] == {"n": 1}
    assert deliver(delivery_id) is None, "a delivered notification is not sent again"
    [attempt] = delivery_attempts(delivery_id)
    assert attempt.succeeded and attempt.status_code == 204
    assert subscription.id


def test_failures_are_retried_with_backoff_then_given_up(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LIFECYCLE_WEBHOOK_MAX_ATTEMPTS", "3")
    owner, _ = new_tenant()
    with webhook_receiver(500, 503, 500) as receiver:
        subscribe(owner, receiver.url, secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "occasion-2")
        assert deliver(delivery_id) is DeliveryStatus.PENDING
        assert deliver(delivery_id) is None, "backing off, up to 30 s (jittered)"
        clock.advance(seconds=30)
        assert deliver(delivery_id) is DeliveryStatus.PENDING
        assert deliver(delivery_id) is None, "then up to 60 s"
        clock.advance(seconds=60)
        assert deliver(delivery_id) is DeliveryStatus.FAILED
        clock.advance(days=1)
        assert deliver(delivery_id) is None
    assert [a.status_code for a in delivery_attempts(delivery_id)] == [500, 503, 500]
    assert len(receiver.received) == 3
    assert len({post.headers[signing.EVENT_ID_HEADER] for post in receiver.received}) == 1


def test_an_unreachable_endpoint_is_an_attempt_too(clock: Clock) -> None:
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        url = receiver.url
    subscribe(owner, url, secret=SECRET)  # the receiver is gone: connection refused
    [delivery_id] = notify_stale(owner.tenant_id, "occasion-3")
    assert deliver(delivery_id) is DeliveryStatus.PENDING
    [attempt] = delivery_attempts(delivery_id)
    assert attempt.status_code is None and attempt.error == "could not connect"


def test_the_same_event_id_notifies_once(clock: Clock) -> None:
    owner, _ = new_tenant()
    subscribe(owner, "https://example.org/one", secret=SECRET)
    subscribe(owner, "https://example.org/two", secret=SECRET, event_types=["job.dead_lettered"])
    assert len(notify_stale(owner.tenant_id, "occasion-4")) == 1, "only the matching subscription"
    assert notify_stale(owner.tenant_id, "occasion-4") == []
    assert count(Notification, Notification.tenant_id == owner.tenant_id) == 1


def test_the_sweep_reopens_interrupted_deliveries_and_dispatches_due_ones(
    clock: Clock, queued_messages: object
) -> None:
    owner, _ = new_tenant()
    subscribe(owner, "https://example.org/one", secret=SECRET)
    [delivery_id] = notify_stale(owner.tenant_id, "occasion-5")
    with transaction() as session:  # a worker claimed it and died mid-POST
        session.execute(
            update(NotificationDelivery).values(
                status="delivering", attempts=1, next_attempt_at=clock.now + timedelta(minutes=2)
            )
        )
    clock.advance(minutes=1)
    assert sweep_deliveries().reopened == 0, "the lease still runs"
    clock.advance(minutes=2)
    swept = sweep_deliveries()
    assert swept.reopened == 1
    [attempt] = delivery_attempts(delivery_id)
    assert attempt.error == "delivery interrupted (worker lost)"
    clock.advance(seconds=11)
    assert sweep_deliveries().dispatched == 1
    assert queued_messages("notifications") >= 1  # type: ignore[operator]


def test_run_events_are_recorded_from_the_transaction_after_a_tenant_subscribes(
    clock: Clock,
) -> None:
    """The run's lock read says whether its tenant subscribes: until it does, a
    coordinator transaction records no run event and never queries the subscriptions;
    the first transaction after `subscribe` records them."""
    owner, reviewer = new_tenant()
    run_id = start_run(owner)
    queried: list[str] = []

    def seen(_conn: object, _cursor: object, statement: str, *_: object) -> None:
        if statement.startswith("SELECT webhook_subscriptions"):  # not the lock's EXISTS
            queried.append(statement)

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", seen)
    try:
        drive_to(reviewer, run_id, "wait_for_framework_selection")
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert queried == [], "an unsubscribed tenant's transactions read no subscription"
    assert _run_events(run_id) == []

    with webhook_receiver() as receiver:
        subscribe(owner, receiver.url, ["approval.requested", "run.waiting"])
        drive_to(reviewer, run_id, "wait_for_soa_approval")
    assert _run_events(run_id) == [
        ("run.waiting", "wait_for_soa_approval"),
        ("approval.requested", "wait_for_soa_approval"),
    ], "the framework's wait opened before the subscription; the SoA's after it"


def _run_events(run_id: uuid.UUID) -> list[tuple[str, str]]:
    with transaction() as session:
        rows = session.execute(
            select(Notification.event_type, Notification.payload)
            .where(Notification.run_id == run_id)
            .order_by(Notification.created_at, Notification.event_type.desc())
        )
        return [(kind, payload["step"]) for kind, payload in rows]
