from __future__ import annotations

from orchestrator.contracts.artifact_registry import ArtifactDeclaration, Decided, Rows

VENDOR_REVIEW = ArtifactDeclaration(
    "vendor_review",
    "create_vendor_review",
    approved_by="vendor_review_approved",
    approved_at="wait_for_vendor_review_approval",
    rows=Rows("vendors", "vendor_id"),
    decided=Decided(("owner",), "vendors without an owner", by_default=True),
    label="Vendor review",
    report="required",
)
