"""Several hosts on this machine: network namespaces joined to one bridge by veth pairs.

Each host is a namespace with its own address on a private /24; the test (this host)
reaches them through the bridge's address. A host can be cut off the network (its link
down) and restored, or killed (every process in it at once, as a host that loses power).
Everything made is removed afterwards, whatever happened. Needs root and iproute2.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass

import pytest


def _ip(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], check=check, capture_output=True, text=True, timeout=30)


@dataclass(frozen=True)
class Host:
    role: str
    namespace: str
    link: str  # the bridge's end of the host's veth pair
    address: str

    @property
    def run(self) -> tuple[str, ...]:
        """The prefix that runs a command on this host."""
        return ("ip", "netns", "exec", self.namespace)

    def pids(self) -> list[int]:
        listed = _ip("netns", "pids", self.namespace, check=False).stdout.split()
        return [int(pid) for pid in listed]


class Network:
    def __init__(self, roles: Sequence[str]) -> None:
        tag = uuid.uuid4().hex[:6]
        third = f"10.{random.randint(64, 127)}.{random.randint(0, 255)}"
        self.subnet = f"{third}.0/24"
        self.bridge = f"lcbr{tag}"
        self.gateway = f"{third}.254"  # this host's address on the bridge
        self.hosts = {
            role: Host(role, f"lc-{tag}-{role}", f"lc{tag}{index}", f"{third}.{index + 1}")
            for index, role in enumerate(roles)
        }

    def __getitem__(self, role: str) -> Host:
        return self.hosts[role]

    def create(self) -> None:
        _ip("link", "add", self.bridge, "type", "bridge")
        _ip("addr", "add", f"{self.gateway}/24", "dev", self.bridge)
        _ip("link", "set", self.bridge, "up")
        for host in self.hosts.values():
            _ip("netns", "add", host.namespace)
            _ip(
                "link",
                "add",
                host.link,
                "type",
                "veth",
                "peer",
                "name",
                "eth0",
                "netns",
                host.namespace,
            )
            _ip("link", "set", host.link, "master", self.bridge, "up")
            _ip("-n", host.namespace, "addr", "add", f"{host.address}/24", "dev", "eth0")
            _ip("-n", host.namespace, "link", "set", "eth0", "up")
            _ip("-n", host.namespace, "link", "set", "lo", "up")

    def cut(self, host: Host) -> None:
        """Off the network: its packets go nowhere, its connections hang (no reset)."""
        _ip("link", "set", host.link, "down")

    def restore(self, host: Host) -> None:
        _ip("link", "set", host.link, "up")

    def kill(self, host: Host) -> list[int]:
        """SIGKILL every process on the host at once; returns their pids."""
        pids = host.pids()
        for pid in pids:
            with suppress(ProcessLookupError):  # it ended meanwhile
                os.kill(pid, signal.SIGKILL)
        return pids

    def remove(self) -> None:
        for host in self.hosts.values():
            if _ip("netns", "pids", host.namespace, check=False).returncode == 0:
                self.kill(host)
                _ip("netns", "del", host.namespace, check=False)
        _ip("link", "del", self.bridge, check=False)


def usable() -> str | None:
    """Why this machine cannot make hosts, or None."""
    if shutil.which("ip") is None:
        return "iproute2's `ip` is not installed"
    if os.geteuid() != 0:
        return "network namespaces need root"
    probe = f"lc-probe-{uuid.uuid4().hex[:6]}"
    made = _ip("netns", "add", probe, check=False)
    _ip("netns", "del", probe, check=False)
    return None if made.returncode == 0 else f"`ip netns add` failed: {made.stderr.strip()}"


@contextmanager
def network(roles: Sequence[str]) -> Iterator[Network]:
    """The hosts of `roles`, removed afterwards; fails under CI=true where they cannot be
    made, skips elsewhere."""
    reason = usable()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    made = Network(roles)
    try:
        made.create()
        yield made
    finally:
        made.remove()
