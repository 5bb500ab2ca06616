"""The HTTP API on the embedded default: fresh SQLite + storage, in-memory broker.

`api` gives a TestClient and a way to mint API keys, on a fresh database per test, with
no worker: signals stay pending. `running_api` is one database per test module with a real
Celery worker in this process (`orchestrator.runtime.embedded.embedded_worker`), so runs move;
tests using it pick their own tenant. `pg_api` is `api` on the test PostgreSQL
(LIFECYCLE_TEST_DATABASE_URL), for tests where storage matters. The API's own lifespan
worker stays off throughout.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from orchestrator.api import app
from orchestrator.config.settings import reset_settings
from orchestrator.db.migrate import upgrade
from orchestrator.engine.messages import get_app
from orchestrator.runtime.embedded import embedded_worker
from orchestrator.service.apikeys import create_key
from orchestrator.service.roles import grant_role
from orchestrator.testing.reset import reset_process_state
from tests.support.embedded import LIFECYCLE_VARS, api_on_postgres
from tests.support.polling import poll

SAMPLES = Path(__file__).resolve().parents[2] / "orchestrator" / "demo" / "samples"
Headers = dict[str, str]


class Api:
    """A client of the API and the keys it calls with."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    def key(
        self,
        *scopes: str,
        tenant: str = "acme",
        principal: str = "user:owner@acme",
        organizations: list[str] | None = None,
        roles: tuple[str, ...] = (),
    ) -> Headers:
        _, key = create_key(tenant, principal, scopes or ("admin",), organizations=organizations)
        for role in roles:
            grant_role(tenant, principal, role, actor_id="user:admin@tests")
        return {"Authorization": f"Bearer {key}"}

    def create_assessment(
        self, headers: Headers, organization: str = "acme-org", name: str = "2027 SCF assessment"
    ) -> dict[str, Any]:
        response = self.client.post(
            "/api/v1/assessments",
            headers=headers,
            json={"organization_id": organization, "name": name},
        )
        assert response.status_code == 201, response.text
        return dict(response.json())

    def upload(
        self,
        headers: Headers,
        assessment_id: str,
        name: str,
        content: bytes,
        media_type: str = "text/markdown",
    ) -> Any:
        return self.client.post(
            f"/api/v1/assessments/{assessment_id}/documents",
            headers=headers,
            files={"file": (name, content, media_type)},
        )

    def upload_samples(self, headers: Headers, assessment_id: str) -> None:
        for path in sorted(SAMPLES.iterdir()):
            response = self.upload(headers, assessment_id, path.name, path.read_bytes())
            assert response.status_code == 201, response.text

    def start(
        self, headers: Headers, assessment_id: str, key: str, body: dict[str, Any] | None = None
    ) -> Any:
        return self.client.post(
            f"/api/v1/assessments/{assessment_id}/workflows/lifecycle/start",
            headers={**headers, "Idempotency-Key": key},
            json=body,
        )

    def run(self, headers: Headers, run_id: str) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/workflows/{run_id}", headers=headers)
        assert response.status_code == 200, response.text
        return dict(response.json())

    def follow(
        self,
        headers: Headers,
        run_id: str,
        until: Callable[[dict[str, Any]], bool],
        timeout_s: float = 60,
    ) -> dict[str, Any]:
        """Poll the run through the API until `until` holds."""

        def observe() -> dict[str, Any]:
            run = self.run(headers, run_id)
            if not until(run):
                assert run["status"] not in ("failed", "cancelled", "completed"), run
            return run

        return poll(observe, until, timeout_s=timeout_s, what=f"run {run_id}", interval_s=0.02)


def waiting_at(step: str, status: str = "waiting_for_approval") -> Callable[[dict[str, Any]], bool]:
    return lambda run: run["current_step"] == step and run["status"] == status


@pytest.fixture
def api(embedded: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    monkeypatch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
    reset_settings()
    yield Api(TestClient(app))
    reset_settings()


@pytest.fixture
def pg_api(postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Api]:
    with api_on_postgres(monkeypatch, tmp_path, postgres_url):
        yield Api(TestClient(app))


@pytest.fixture(scope="module")
def running_api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Api]:
    """One embedded environment for the module, with a worker: stopping a worker costs
    seconds, so a module pays it once."""
    with pytest.MonkeyPatch.context() as patch:
        for name in LIFECYCLE_VARS:
            patch.delenv(name, raising=False)
        patch.setenv("LIFECYCLE_HOME", str(tmp_path_factory.mktemp("running-api")))
        patch.setenv("LIFECYCLE_API_EMBEDDED_WORKER", "false")
        reset_process_state()
        reset_settings()
        upgrade()
        with embedded_worker(get_app(), concurrency=3):
            yield Api(TestClient(app))
        reset_process_state()
        reset_settings()
