"""Flower's configuration file:
`celery -A orchestrator flower --conf=orchestrator/runtime/flowerconfig.py`.

Flower executes this file and reads its module-level names as options. Basic auth comes
from FLOWER_BASIC_AUTH and is checked first: a missing or placeholder password stops
Flower before it listens (exit status 2).
"""

import sys

from orchestrator.runtime.flower_auth import FlowerAuthError, basic_auth_from_env

try:
    basic_auth = basic_auth_from_env()
except FlowerAuthError as _error:
    sys.stderr.write(f"flower: refusing to start: {_error}\n")
    raise SystemExit(2) from None

# Keep enough history to follow a busy fleet; forget workers gone for an hour.
max_tasks = 20000
purge_offline_workers = 3600
# Operators read times in the fleet's own clock (UTC), like the CLI and the logs.
natural_time = False
