from __future__ import annotations

from typing import Any

from orchestrator.jobs.interface import JobContext
from workers.analysis.drafting import drafts


@drafts("vendor_review")
def draft_vendors(context: JobContext | None) -> dict[str, Any]:
    return {
        "vendors": [
            {"vendor_id": "V-1", "name": "Acme", "owner": None},
            {"vendor_id": "V-2", "name": "Globex", "owner": "ops@example.org"},
            {"vendor_id": "V-3", "name": "Initech", "owner": None, "applicable": False},
        ]
    }
