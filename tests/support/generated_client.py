"""A Python client generated from the API's own OpenAPI document (openapi-python-client),
importable for the length of a test; what the generator cannot express is fixed in the
document, never in the generated code."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

from fastapi.testclient import TestClient

from orchestrator.api import app

BIN = Path(sys.executable).parent
PACKAGE = "lifecycle_client"


class GeneratedClient:
    """The generated package: its operations by module, its models, a client per key."""

    def __init__(self, package: ModuleType) -> None:
        self.package = package
        self.models = importlib.import_module(f"{PACKAGE}.models")
        self.types = importlib.import_module(f"{PACKAGE}.types")

    def operation(self, tag_and_name: str) -> Any:
        """`lifecycle.lifecycle_start`: the module of one operation, as the generator names it."""
        return importlib.import_module(f"{PACKAGE}.api.{tag_and_name}")

    def client(self, headers: dict[str, str]) -> Any:
        """A client calling the app in process with one person's API key."""
        client = self.package.AuthenticatedClient(base_url="http://testserver", token="-")
        client.set_httpx_client(TestClient(app, headers=headers))
        return client


@contextmanager
def generated_client(tmp_path: Path) -> Iterator[GeneratedClient]:
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(app.openapi()), encoding="utf-8")
    out = tmp_path / PACKAGE
    generated = subprocess.run(
        [str(BIN / "openapi-python-client"), "generate", "--path", str(document)]
        + ["--output-path", str(out), "--meta", "none"],
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
        check=False,
    )
    assert generated.returncode == 0, generated.stdout + generated.stderr
    # Every operation is generated: a schema the generator cannot read drops the
    # operations using it, with a warning naming them.
    assert "Endpoint will not be generated" not in generated.stdout, generated.stdout
    sys.path.insert(0, str(tmp_path))
    try:
        yield GeneratedClient(importlib.import_module(PACKAGE))
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith(PACKAGE)]:
            del sys.modules[name]
