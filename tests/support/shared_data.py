"""Where the real test data lives: beside the checkout (`../shared/data`), or where
LIFECYCLE_SHARED_DATA says (a worktree elsewhere). Tests skip with the reason where absent."""

from __future__ import annotations

import os
from pathlib import Path

SHARED_DATA = Path(
    os.environ.get("LIFECYCLE_SHARED_DATA", "")
    or Path(__file__).resolve().parents[3] / "shared" / "data"
)
