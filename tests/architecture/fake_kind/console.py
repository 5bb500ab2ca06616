from __future__ import annotations

from typing import Any

from markupsafe import Markup

from orchestrator.console.amend_fields import FIELDS, AmendField
from orchestrator.console.charts import CHARTS, Chart
from orchestrator.console.draft_tables import TABLES, Column, TableSpec

VENDORS = TABLES.add(
    "vendor_review",
    (
        TableSpec(
            "vendors",
            "Vendors",
            "vendors",
            "vendor_id",
            (Column("vendor_id", "Vendor"), Column("owner", "Owner")),
            decided=True,
        ),
    ),
)
FIELDS.add("vendor_review", (AmendField("owner", "Owner", "text"),))


@CHARTS.register("vendor_review")
def chart(content: dict[str, Any]) -> list[Chart]:
    owned = sum(1 for row in content["vendors"] if row.get("owner"))
    return [Chart("Vendors with an owner", Markup("<svg></svg>"), ("owned",), [(owned,)])]
