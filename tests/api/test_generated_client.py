"""A client generated from the OpenAPI document (openapi-python-client) drives the API:
create an assessment, upload a document, start the lifecycle, read the run. What the
generator cannot express is fixed in the document, never in the generated code."""

from __future__ import annotations

import io
from pathlib import Path

from tests.api.conftest import Api
from tests.support.generated_client import generated_client


def test_a_generated_client_starts_a_lifecycle(api: Api, tmp_path: Path) -> None:
    with generated_client(tmp_path) as generated:
        create = generated.operation("assessments.assessments_create")
        upload = generated.operation("assessments.assessments_upload")
        start = generated.operation("lifecycle.lifecycle_start")
        read = generated.operation("lifecycle.lifecycle_read")
        models, types = generated.models, generated.types
        client = generated.client(api.key())

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
