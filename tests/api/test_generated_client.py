"""A client generated from the OpenAPI document (openapi-python-client) drives the API:
create an assessment, upload a document, start the lifecycle, read the run. What the
generator cannot express is fixed in the document, never in the generated code."""

from __future__ import annotations

import importlib
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from orchestrator.api import app
from tests.api.conftest import Api

BIN = Path(sys.executable).parent


def _generate(tmp_path: Path) -> Any:
    document = tmp_path / "openapi.json"
    document.write_text(json.dumps(app.openapi()), encoding="utf-8")
    out = tmp_path / "lifecycle_client"
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
    sys.path.insert(0, str(tmp_path))
    return importlib.import_module("lifecycle_client")


def test_a_generated_client_starts_a_lifecycle(api: Api, tmp_path: Path) -> None:
    client_package = _generate(tmp_path)
    try:
        create = importlib.import_module("lifecycle_client.api.assessments.assessments_create")
        upload = importlib.import_module("lifecycle_client.api.assessments.assessments_upload")
        start = importlib.import_module("lifecycle_client.api.lifecycle.lifecycle_start")
        read = importlib.import_module("lifecycle_client.api.lifecycle.lifecycle_read")
        models = importlib.import_module("lifecycle_client.models")
        types = importlib.import_module("lifecycle_client.types")

        api.client.headers.update(api.key())
        client = client_package.AuthenticatedClient(base_url="http://testserver", token="-")
        client.set_httpx_client(api.client)  # the app in process, with the key's header

        assessment = create.sync_detailed(
            client=client,
            body=models.CreateAssessment(organization_id="acme-org", name="2027 SCF"),
            idempotency_key="client-2027",
        )
        assert assessment.status_code == 201, assessment.content
        assessment_id = assessment.parsed.id
        document = upload.sync_detailed(
            assessment_id,
            client=client,
            body=models.AssessmentsUploadBody(
                file=types.File(
                    payload=io.BytesIO(b"# Access\n\nMFA everywhere.\n"),
                    file_name="access.md",
                    mime_type="text/markdown",
                )
            ),
        )
        assert document.status_code == 201, document.content
        assert document.parsed.filename == "access.md"
        run = start.sync_detailed(
            assessment_id,
            client=client,
            body=models.StartLifecycle(),  # the generator sends an unset optional body as-is
            idempotency_key="client-run",
        )
        assert run.status_code == 201, run.content
        status = read.sync_detailed(run.parsed.id, client=client)
        assert status.status_code == 200, status.content
        assert (status.parsed.id, status.parsed.assessment_id) == (run.parsed.id, assessment_id)
        assert status.parsed.status == "pending"
        missing = read.sync_detailed(assessment_id, client=client)
        assert missing.status_code == 404
        assert missing.parsed.code == "not_found"  # errors parse as the Problem model
    finally:
        sys.path.remove(str(tmp_path))
        for name in [name for name in sys.modules if name.startswith("lifecycle_client")]:
            del sys.modules[name]
