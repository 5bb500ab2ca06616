"""Imported by a worker (`--include orchestrator.testing.ship_definition_v2`): that process
ships lifecycle definition v2 beside v1, as a deployment of v2 would."""

from orchestrator.lifecycle.definitions import ship
from orchestrator.testing.definition_v2 import V2

ship(V2)
