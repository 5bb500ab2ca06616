"""Operating tests reuse the integration tier's services and worker fleet (real
PostgreSQL, Redis and `celery worker` processes; skipped locally without them)."""

from tests.integration.conftest import broker_url, fleet, postgres_url, services

__all__ = ["broker_url", "fleet", "postgres_url", "services"]
