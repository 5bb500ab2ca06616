"""A PostgreSQL cluster and a Redis server of a test's own, to stop and restart at will.

Fault tests break these, never the shared servers. The cluster is made with
`pg_createcluster` (trust auth, a free port) and dropped afterwards; Redis runs with no
persistence, so a restart empties it, as a crashed cache-style broker would.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import uuid
from pathlib import Path

import pytest
import redis
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from orchestrator.db.migrate import upgrade
from tests.support.polling import scaled, wait_for


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PrivateRedis:
    """On this host's loopback, or (`host`: `ip netns exec <ns>`) listening on `address`
    in another network namespace."""

    def __init__(
        self, directory: Path, *, address: str = "127.0.0.1", host: tuple[str, ...] = ()
    ) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is needed to run a private broker")
        self.binary, self.directory, self.port = binary, directory, free_port()
        self.address, self.host = address, host
        self.url = f"redis://{address}:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                *self.host,
                self.binary,
                "--port",
                str(self.port),
                "--bind",
                self.address,
                "--protected-mode",
                "no",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        client = redis.Redis.from_url(self.url)
        try:
            wait_for(lambda: _answers(client), timeout_s=20, what="the private Redis server")
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=scaled(20))
            self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()


def _answers(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.ConnectionError:
        return False


class PrivatePostgres:
    """One cluster of the installed PostgreSQL version, on a free port, trusting local TCP;
    or (`host`: `ip netns exec <ns>`) run in another network namespace, listening on
    `address` and trusting `network`."""

    def __init__(
        self, *, address: str = "127.0.0.1", network: str = "", host: tuple[str, ...] = ()
    ) -> None:
        for tool in ("pg_createcluster", "pg_ctlcluster", "pg_dropcluster"):
            if shutil.which(tool) is None:
                pytest.fail(f"{tool} is needed to run a private PostgreSQL cluster")
        versions = sorted(Path("/usr/lib/postgresql").iterdir(), key=lambda p: int(p.name))
        self.version = versions[-1].name
        self.name = f"faults_{uuid.uuid4().hex[:8]}"
        self.port = free_port()
        self.address, self.network, self.host = address, network, host
        self.server_url = f"postgresql+psycopg://postgres@{address}:{self.port}/postgres"
        self.url = ""

    def _ctl(self, *args: str) -> None:
        subprocess.run(
            [*self.host, "pg_ctlcluster", self.version, self.name, *args],
            check=True,
            capture_output=True,
            timeout=scaled(120),
        )

    def create(self) -> str:
        """Create and start the cluster and a migrated database; returns its URL."""
        subprocess.run(
            [
                "pg_createcluster",
                self.version,
                self.name,
                "-p",
                str(self.port),
                *([] if self.host else ["--start"]),
                "--",
                "--auth=trust",
            ],
            check=True,
            capture_output=True,
            timeout=scaled(120),
        )
        if self.host:  # started in its namespace, trusting the hosts of its network
            conf = Path("/etc/postgresql") / self.version / self.name
            with (conf / "postgresql.conf").open("a") as settings:
                settings.write(f"listen_addresses = '{self.address}'\n")
            with (conf / "pg_hba.conf").open("a") as rules:
                rules.write(f"host all all {self.network} trust\n")
            self._ctl("start")
        admin = create_engine(self.server_url, isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(text('CREATE DATABASE "lifecycle"'))
        admin.dispose()
        url = make_url(self.server_url).set(database="lifecycle")
        self.url = url.render_as_string(hide_password=False)
        upgrade(self.url)
        return self.url

    def restart(self) -> None:
        """Fast shutdown (every session terminated, transactions rolled back), then start."""
        self._ctl("restart", "-m", "fast")

    def stop(self) -> None:
        self._ctl("stop", "-m", "fast")

    def start(self) -> None:
        self._ctl("start")

    def drop(self) -> None:
        subprocess.run(
            ["pg_dropcluster", self.version, self.name, "--stop"],
            check=False,
            capture_output=True,
            timeout=scaled(120),
        )
