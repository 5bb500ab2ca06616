"""Real services for the integration tier: PostgreSQL, Redis and worker processes.

Set LIFECYCLE_TEST_DATABASE_URL (a PostgreSQL server URL; a fresh database is created per
session) and LIFECYCLE_TEST_BROKER_URL (a Redis URL, whose database is flushed, or an
amqp:// RabbitMQ vhost URL, whose fleet queues are deleted: CI runs the `broker_matrix`
tests on both). Without
them these tests skip locally; with CI=true they fail instead of skipping.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

import pytest
from amqp.exceptions import AccessRefused, NotAllowed
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from orchestrator.db.migrate import upgrade
from orchestrator.engine.broker_topology import is_amqp
from orchestrator.testing.empty_broker import empty_broker
from orchestrator.testing.reset import reset_process_state
from orchestrator.testing.worker_processes import WorkerProcesses as Fleet
from tests.support.polling import scaled

DATABASE_URL = os.environ.get("LIFECYCLE_TEST_DATABASE_URL")
BROKER_URL = os.environ.get("LIFECYCLE_TEST_BROKER_URL")


@pytest.fixture(scope="session")
def services() -> tuple[str, str]:
    if not DATABASE_URL or not BROKER_URL:
        reason = "integration tier needs LIFECYCLE_TEST_DATABASE_URL and LIFECYCLE_TEST_BROKER_URL"
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but {reason}")
        pytest.skip(reason)
    return DATABASE_URL, BROKER_URL


@pytest.fixture(scope="session")
def postgres_url(services: tuple[str, str]) -> Iterator[str]:
    """A fresh database on the test server, migrated to head, dropped afterwards."""
    server = make_url(services[0]).set(drivername="postgresql+psycopg")
    name = f"lifecycle_it_{uuid.uuid4().hex[:10]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(text(f'CREATE DATABASE "{name}"'))
    url = server.set(database=name).render_as_string(hide_password=False)
    upgrade(url)
    yield url
    with admin.connect() as connection:
        connection.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def worker_broker(url: str, worker: str | None) -> str:
    """The broker of one pytest-xdist worker, so parallel fleets never share queues: on
    Redis each its own database, counting down from the configured one (gw0 keeps it, gw1
    the one below...); on RabbitMQ each its own vhost (gw0 keeps it, gw1 uses
    `<vhost>-gw1`...), which the server must hold (`rabbitmqctl add_vhost`)."""
    if worker is None or not worker.startswith("gw"):
        return url
    number = int(worker.removeprefix("gw"))
    if is_amqp(url):
        if number == 0:
            return url
        parts = urlsplit(url)
        vhost = f"{unquote(parts.path[1:]) or '/'}-{worker}"
        return urlunsplit(parts._replace(path="/" + quote(vhost, safe="")))
    base, _, last = url.rpartition("/")
    db = int(last or 0) - number
    if db < 0:
        raise RuntimeError(f"no Redis database left for xdist worker {worker} below {url}")
    return f"{base}/{db}"


@pytest.fixture(scope="session")
def broker_url(services: tuple[str, str]) -> str:
    """The test broker, emptied: a Redis database flushed, or (amqp://) the fleet's queues
    deleted from the RabbitMQ vhost, to be declared afresh as quorum queues."""
    return emptied(worker_broker(services[1], os.environ.get("PYTEST_XDIST_WORKER")))


def emptied(url: str) -> str:
    """`url`'s broker emptied; a RabbitMQ vhost the server lacks fails with how to add it."""
    try:
        empty_broker(url)
    except (NotAllowed, AccessRefused) as refused:  # RabbitMQ: no such vhost, or no rights
        vhost = unquote(urlsplit(url).path[1:]) or "/"
        pytest.fail(
            f"the test broker refuses vhost {vhost!r} ({refused}): each pytest-xdist worker "
            f"past the first uses a vhost of its own; add it with `rabbitmqctl add_vhost "
            f"{vhost}` and `rabbitmqctl set_permissions -p {vhost} <user> '.*' '.*' '.*'`"
        )
    return url


@pytest.fixture
def fleet(
    postgres_url: str, broker_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Fleet]:
    """This process and the workers it starts share one database, broker and storage."""
    env = {
        "LIFECYCLE_DATABASE_URL": postgres_url,
        "LIFECYCLE_BROKER_URL": broker_url,
        "LIFECYCLE_HOME": str(tmp_path),
        "LIFECYCLE_STORAGE_DIR": str(tmp_path / "storage"),
        # Short, so a message held by a killed worker comes back within the test.
        "LIFECYCLE_VISIBILITY_TIMEOUT_S": "4",
        "LIFECYCLE_UNACKED_RESTORE_INTERVAL_S": "1",
    }
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("LIFECYCLE_HOLD_JOB_STEP", raising=False)
    # Each fleet starts on an empty broker: a job another test of the session left queued
    # never reaches this test's workers, whatever order the files run in (-n).
    empty_broker(broker_url)
    reset_process_state()
    with Fleet(env, tmp_path / "logs", ready_timeout_s=scaled(60)) as running:
        yield running
    reset_process_state()
