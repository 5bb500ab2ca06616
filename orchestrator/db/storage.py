"""Content-addressed file storage: a file's path is its SHA-256, so writes are idempotent."""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def content_path(root: Path, digest: str, suffix: str = "") -> Path:
    """Where put_bytes keeps content with this SHA-256: root/ab/cd/<sha256><suffix>."""
    return root / digest[:2] / digest[2:4] / f"{digest}{suffix}"


def put_bytes(root: Path, data: bytes, suffix: str = "") -> tuple[Path, str]:
    """Store `data` under root/ab/cd/<sha256><suffix>; returns (path, sha256)."""
    digest = sha256_hex(data)
    path = content_path(root, digest, suffix)
    if not path.exists():
        put_at(path, data)
    return path, digest


def put_at(path: Path, data: bytes) -> None:
    """Write `data` at `path` whole or not at all: a crash never leaves a half-written file
    under the final name, and a reader sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".part-")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
