"""Continuous assessment tests use the HTTP API's fixtures."""

from tests.api.conftest import api, running_api

__all__ = ["api", "running_api"]
