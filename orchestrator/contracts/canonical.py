"""Canonical JSON and its SHA-256: the same content gives the same digest wherever it was
read (keys sorted, no spaces, UTF-8), so a digest recorded once can be recomputed later."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> bytes:
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def canonical_sha256(value: Any) -> str:
    return hashlib.sha256(canonical_json(value)).hexdigest()
