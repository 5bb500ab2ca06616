from __future__ import annotations

from tests.architecture.fake_kind import console, drafting

MODULES = (console, drafting)
