"""Webhooks and export targets reach public addresses only, unless the operator allows a
network: refused at registration, and at each delivery after resolving the name, with the
connection pinned to the address checked. Nothing here connects beyond 127.0.0.1."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from ipaddress import ip_address, ip_network
from typing import Any

import pytest

from orchestrator.config.effects import EffectSettings
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.errors import InvalidInput
from orchestrator.contracts.external_effects import EffectStatus
from orchestrator.contracts.identity import Actor
from orchestrator.notifications.delivery import DeliveryStatus, deliver
from orchestrator.notifications.effect_worker import perform_effect
from orchestrator.notifications.export_targets import add_export_target
from orchestrator.notifications.outbound_addresses import refused
from orchestrator.notifications.subscriptions import subscribe
from tests.support.outside_effects import at_report, closed_port, effects
from tests.support.sweeps import Clock, delivery_attempts, new_tenant, notify_stale
from tests.support.webhook_receiver import webhook_receiver

SECRET = "s" * 32
LOOPBACK = '["127.0.0.0/8", "::1/128"]'

INTERNAL = [
    "127.0.0.1", "127.8.9.10", "169.254.169.254", "10.0.0.5", "172.16.3.4", "192.168.1.1",
    "100.64.0.1", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "0.0.0.0",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1", "2001:db8::1",
    "::ffff:127.0.0.1", "::ffff:169.254.169.254", "::ffff:10.0.0.1",
]  # fmt: skip
PUBLIC = ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:93.184.216.34"]

REFUSED_URLS = [
    "http://127.0.0.1/hook", "http://127.1:8080/hook", "http://2130706433/hook",
    "http://0x7f.0.0.1/hook", "http://localhost:9000/hook", "http://api.localhost/hook",
    "http://169.254.169.254/latest/meta-data/", "http://10.1.2.3/hook",
    "http://192.168.0.10/hook", "http://0.0.0.0:8000/hook", "http://224.0.0.1/hook",
    "http://[::1]/hook", "http://[::]/hook", "http://[fe80::1]/hook",
    "http://[::ffff:127.0.0.1]/hook", "http://[::ffff:a9fe:a9fe]/hook", "http://[fd00::1]/hook",
]  # fmt: skip


@pytest.fixture
def only_public(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """No allowed networks: what a fleet runs with by default."""
    monkeypatch.setenv("LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS", "[]")
    reset_settings()
    yield
    reset_settings()


def _allow(monkeypatch: pytest.MonkeyPatch, networks: str) -> None:
    monkeypatch.setenv("LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS", networks)
    reset_settings()


@pytest.mark.parametrize("address", INTERNAL)
def test_internal_addresses_are_refused_unless_allowed(address: str) -> None:
    parsed = ip_address(address)
    assert refused(parsed, [])
    everything = [ip_network("0.0.0.0/0"), ip_network("::/0")]
    mapped = getattr(parsed, "ipv4_mapped", None)
    assert not refused(parsed, everything if mapped is None else [ip_network("0.0.0.0/0")])


@pytest.mark.parametrize("address", PUBLIC)
def test_public_addresses_pass(address: str) -> None:
    assert not refused(ip_address(address), [])


@pytest.mark.parametrize("url", REFUSED_URLS)
def test_registration_refuses_internal_destinations(only_public: None, url: str) -> None:
    owner, _ = new_tenant()
    with pytest.raises(InvalidInput, match="LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS"):
        subscribe(owner, url)
    with pytest.raises(InvalidInput, match="LIFECYCLE_OUTBOUND_ALLOWED_NETWORKS"):
        add_export_target(owner, url)


def test_an_allowed_network_is_accepted_and_only_it(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _allow(monkeypatch, '["10.20.0.0/16"]')
    owner, _ = new_tenant()
    subscribe(owner, "http://10.20.3.4:8080/hook")
    add_export_target(owner, "https://10.20.3.4/exports")
    with pytest.raises(InvalidInput):
        subscribe(owner, "http://10.21.0.1/hook")
    with pytest.raises(InvalidInput):
        subscribe(owner, "http://localhost/hook")  # loopback is not in 10.20.0.0/16


def _attempt_errors(delivery_id: int) -> list[str | None]:
    return [attempt.error for attempt in delivery_attempts(delivery_id)]


def test_a_name_resolving_to_loopback_is_refused_at_delivery(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registered while loopback was allowed (a name is not resolved then); delivered after
    the operator took it away: refused after resolving, nothing sent, no address shown."""
    _allow(monkeypatch, LOOPBACK)
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        subscribe(owner, receiver.url.replace("127.0.0.1", "localhost"), secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "by-name")
        _allow(monkeypatch, "[]")
        assert deliver(delivery_id) is DeliveryStatus.PENDING
        assert receiver.received == []
    assert _attempt_errors(delivery_id) == ["destination address not allowed"]


def test_allowed_loopback_is_delivered_to_by_name(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _allow(monkeypatch, LOOPBACK)
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        subscribe(owner, receiver.url.replace("127.0.0.1", "localhost"), secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "allowed")
        assert deliver(delivery_id) is DeliveryStatus.DELIVERED
        assert len(receiver.received) == 1


def test_the_connection_goes_to_the_address_checked(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The name answers loopback once, then nothing: a client that resolved again to
    connect would fail. The request arrives, naming the host it was sent to."""
    _allow(monkeypatch, LOOPBACK)
    real = socket.getaddrinfo
    asked: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        numeric = kwargs.get("flags", 0) & socket.AI_NUMERICHOST
        if host != "hooks.rebind.test" or numeric:
            return real(host, *args, **kwargs)
        asked.append(host)
        if len(asked) > 1:
            raise socket.gaierror(socket.EAI_NONAME, "no longer resolves")
        return real("127.0.0.1", *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    owner, _ = new_tenant()
    with webhook_receiver() as receiver:
        port = receiver.url.split(":")[2].split("/")[0]
        subscribe(owner, f"http://hooks.rebind.test:{port}/hooks/lifecycle", secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "pinned")
        status = deliver(delivery_id)
        assert (status, _attempt_errors(delivery_id)) == (DeliveryStatus.DELIVERED, [None])
        [received] = receiver.received
    assert asked == ["hooks.rebind.test"]
    assert received.headers["Host"] == f"hooks.rebind.test:{port}"


def test_a_redirect_is_not_followed(clock: Clock) -> None:
    owner, _ = new_tenant()
    with webhook_receiver(302) as receiver:
        subscribe(owner, receiver.url, secret=SECRET)
        [delivery_id] = notify_stale(owner.tenant_id, "redirected")
        assert deliver(delivery_id) is DeliveryStatus.PENDING
        assert len(receiver.received) == 1
    assert _attempt_errors(delivery_id) == ["HTTP 302 (redirects are not followed)"]


def test_an_export_to_a_refused_address_is_not_sent_and_says_only_why(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _allow(monkeypatch, LOOPBACK)
    owner, reviewer = new_tenant()
    with webhook_receiver() as receiver:
        run_id = at_report(owner, reviewer, receiver.url.replace("127.0.0.1", "localhost"))
        _allow(monkeypatch, "[]")
        assert _export_errors(owner, run_id) == {"not sent: destination address not allowed"}
        assert receiver.received == []


def test_an_unreachable_export_target_error_carries_no_detail(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _allow(monkeypatch, LOOPBACK)
    owner, reviewer = new_tenant()
    run_id = at_report(owner, reviewer, f"http://127.0.0.1:{closed_port()}/exports")
    assert _export_errors(owner, run_id) == {"not sent: could not connect"}


def _export_errors(owner: Actor, run_id: uuid.UUID) -> set[str | None]:
    """Each pending publication tried once and given up: the errors the tenant reads."""
    pending = [e.id for e in effects(owner, run_id) if e.status == EffectStatus.PENDING.value]
    assert pending
    once = EffectSettings(max_attempts=1)
    assert {perform_effect(effect, settings=once) for effect in pending} == {EffectStatus.FAILED}
    return {e.last_error for e in effects(owner, run_id) if e.id in pending}
