"""POA&M: one dated, owned action item for every gap."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobResult
from workers.analysis.catalog import run_scf_catalog
from workers.analysis.output import publish
from workers.inputs import latest_artifact, require_artifact, source

#: Gap severity -> (priority, days until the milestone).
PRIORITIES = {"high": ("P1", 30), "medium": ("P2", 90), "low": ("P3", 180)}
OWNER_ROLES = {
    "AST": "IT Asset Manager", "BCD": "Business Continuity Manager",
    "CFG": "Infrastructure Lead", "CHG": "Change Manager", "CPL": "Compliance Officer",
    "CRY": "Security Architect", "DCH": "Data Protection Officer", "END": "Endpoint Lead",
    "GOV": "CISO", "HRS": "HR Director", "IAC": "Identity & Access Manager",
    "IRO": "Incident Response Lead", "MON": "SOC Manager", "NET": "Network Security Lead",
    "OPS": "IT Operations Manager", "PES": "Facilities Manager", "PRI": "Data Protection Officer",
    "RSK": "Risk Manager", "SAT": "Security Awareness Lead", "SEA": "Security Architect",
    "TPM": "Vendor Risk Manager", "VPM": "Vulnerability Management Lead",
}
DEFAULT_OWNER = "CISO"


def create_poam(context: JobContext) -> JobResult:
    gap_analysis = require_artifact(context, ArtifactKind.GAP_ANALYSIS)
    maturity = latest_artifact(context.session, context.request.run_id,
                               ArtifactKind.MATURITY_ASSESSMENT)
    levels = ({d["domain"]: d["level"] for d in maturity.content.get("domains", [])}
              if maturity else {})
    today = utcnow().date()
    catalog = run_scf_catalog(context)
    items = [_item(catalog, number, gap, today, levels)
             for number, gap in enumerate(gap_analysis.content.get("gaps", []), start=1)]
    by_priority = {priority: sum(1 for item in items if item["priority"] == priority)
                   for priority, _ in PRIORITIES.values()}
    content = {
        "sources": [source(a) for a in (gap_analysis, maturity) if a is not None],
        "created_on": today.isoformat(),
        "items": items,
        "summary": {"items": len(items), **by_priority},
    }
    return publish(context, ArtifactKind.POAM, content)


def _item(catalog: LoadedCatalog, number: int, gap: dict[str, Any], today: date,
          levels: dict[str, int]) -> dict[str, Any]:
    priority, days = PRIORITIES.get(gap.get("severity", "high"), PRIORITIES["high"])
    control = catalog.control(str(gap.get("control_id")))
    target = control.description if control else f"{gap.get('title')} is implemented."
    domain = str(gap.get("domain"))
    return {
        "id": f"POAM-{number:03d}",
        "control_id": gap.get("control_id"),
        "title": gap.get("title"),
        "domain": domain,
        "domain_maturity": levels.get(domain),
        "weakness": gap.get("finding") or f"No evidence that {gap.get('title')} is in place.",
        "remediation": (f"Implement and document the control so that: {target} "
                        "Then upload the policy, procedure or records that show it and "
                        "re-run the evidence analysis."),
        "severity": gap.get("severity"),
        "priority": priority,
        "milestone_date": (today + timedelta(days=days)).isoformat(),
        "owner_role": OWNER_ROLES.get(domain, DEFAULT_OWNER),
        "status": "open",
    }
