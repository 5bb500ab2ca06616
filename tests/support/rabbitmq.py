"""RabbitMQ for the integration tier: emptying the test vhost's queues, and a private node.

The shared server's test vhost is emptied (the fleet's queues deleted, so each session
declares them afresh as quorum queues). Tests that restart or break the broker start a
node of their own (`PrivateRabbitMQ`: its own node name, ports, data and log directory),
never the shared one.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from kombu import Connection

from tests.support.polling import scaled, wait_for
from tests.support.private_services import free_port

SERVER_BINARIES = ("/usr/lib/rabbitmq/bin/rabbitmq-server",)


def _answers(url: str) -> bool:
    try:
        with Connection(url, connect_timeout=2) as connection:
            connection.ensure_connection(max_retries=1)
        return True
    except Exception:  # not listening yet, or still booting
        return False


class PrivateRabbitMQ:
    """A RabbitMQ node on free ports with its data under `directory`; restarts keep the data
    (durable quorum queues and their persistent messages survive, as on a real server)."""

    def __init__(self, directory: Path) -> None:
        # The server itself, not Debian's wrapper (which switches to the rabbitmq user).
        binary = next((b for b in SERVER_BINARIES if Path(b).exists()), None)
        binary = binary or shutil.which("rabbitmq-server")
        if binary is None:
            pytest.fail("rabbitmq-server is needed to run a private RabbitMQ node")
        self.binary = binary
        self.directory = directory
        self.port = free_port()
        self.node = f"fleet{uuid.uuid4().hex[:8]}@localhost"
        self.url = f"amqp://guest:guest@127.0.0.1:{self.port}//"
        self.process: subprocess.Popen[bytes] | None = None
        for name in ("mnesia", "log"):
            (directory / name).mkdir(parents=True, exist_ok=True)
        (directory / "plugins").write_text("[].\n")
        # Its own listener and no shared env file (which names the shared node).
        (directory / "rabbitmq.conf").write_text(f"listeners.tcp.local = 127.0.0.1:{self.port}\n")
        (directory / "rabbitmq-env.conf").write_text("")

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "RABBITMQ_NODENAME": self.node,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.port),
            "RABBITMQ_DIST_PORT": str(free_port()),
            "RABBITMQ_MNESIA_BASE": str(self.directory / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.directory / "log"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.directory / "plugins"),
            "RABBITMQ_PID_FILE": str(self.directory / "node.pid"),
            "RABBITMQ_CONFIG_FILE": str(self.directory / "rabbitmq.conf"),
            "RABBITMQ_CONF_ENV_FILE": str(self.directory / "rabbitmq-env.conf"),
        }

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary],
            env=self._env(),
            stdout=(self.directory / "server.out").open("ab"),
            stderr=subprocess.STDOUT,
            cwd=self.directory,
            start_new_session=True,
        )
        wait_for(self._answers, timeout_s=90, what="the private RabbitMQ node")

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            output = (self.directory / "server.out").read_text(errors="replace")
            raise RuntimeError(f"the private RabbitMQ node exited: {output[-2000:]}")
        return _answers(self.url)

    def stop(self) -> None:
        """Stops the node (SIGTERM: the broker shuts down and keeps its durable data)."""
        if self.process is None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=scaled(60))
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=scaled(20))
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


@pytest.fixture
def private_rabbitmq(services: tuple[str, str], tmp_path: Path) -> Iterator[PrivateRabbitMQ]:
    """A node of its own for one test (import it, with `broker_url`, into a test module)."""
    (tmp_path / "rabbitmq").mkdir()
    node = PrivateRabbitMQ(tmp_path / "rabbitmq")
    node.start()
    yield node
    node.stop()


@pytest.fixture
def broker_url(private_rabbitmq: PrivateRabbitMQ) -> str:
    """The test's fleet uses the private node (overrides the shared test broker); its vhost
    has never seen the fleet's queues."""
    return private_rabbitmq.url
