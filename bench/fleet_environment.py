"""A bench fleet's environment: a fresh migrated database next to the given server, an
emptied broker (a Redis database flushed, or the fleet's RabbitMQ queues deleted) and a
home, set in this process's environment for the workers it
starts; the database is dropped afterwards."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.compare.db import drop_database, fresh_database
from orchestrator.testing.empty_broker import empty_broker


@contextmanager
def fleet_environment(
    server_url: str, broker_url: str, prefix: str, settings: dict[str, str] | None = None
) -> Iterator[tuple[dict[str, str], Path]]:
    """(the workers' environment, the home) for one fleet; `settings` are added to it."""
    url, database = fresh_database(server_url, prefix)
    home = Path(tempfile.mkdtemp(prefix=f"{prefix}-"))
    env = {
        "LIFECYCLE_DATABASE_URL": url,
        "LIFECYCLE_BROKER_URL": broker_url,
        "LIFECYCLE_HOME": str(home),
        **(settings or {}),
    }
    empty_broker(broker_url)
    os.environ.update(env)
    # Imported once the environment names this fleet's database.
    from orchestrator.db.migrate import upgrade
    from orchestrator.db.session import dispose_engines
    from orchestrator.testing.reset import reset_process_state

    reset_process_state()
    try:
        upgrade(url)
        yield env, home
    finally:
        dispose_engines()
        drop_database(server_url, database)
