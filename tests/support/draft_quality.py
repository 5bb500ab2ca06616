"""What makes a draft signable, measured the same way by the real-data tests and by
`bench.drafts_quality`: findings per requirement, distinct causes, recommendations free of
products and URLs, POA&M items with NIST ids or a reason, distinct milestones, resources
estimated or flagged, report figures equal to the drafts', and the points of contact the
POA&M exports state."""

from __future__ import annotations

import csv
import io
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from workers.analysis.requirement_rollup import label_of

URL = re.compile(r"https?://|www\.|\b[\w-]+\.(?:com|io|net)\b", re.IGNORECASE)
#: Vendors and products an assessor would not accept in a recommendation (whole words),
#: kept apart from the product's own filter so the measure is not the rule it checks.
PRODUCTS = (
    "Microsoft",
    "Active Directory",
    "SCCM",
    "Intune",
    "Splunk",
    "ServiceNow",
    "AirWatch",
    "Casper",
    "Jamf",
    "Okta",
    "Tripwire",
    "CimTrak",
    "Puppet",
    "Chef",
    "Nessus",
    "Qualys",
    "Rapid7",
    "Tenable",
    "SolarWinds",
    "Symantec",
    "McAfee",
    "Sophos",
    "Cisco",
    "Juniper",
    "Aruba",
    "LANDesk",
    "Duo",
    "Yubico",
    "BitLocker",
    "Vormetric",
    "Entrust",
    "KnowB4",
    "Docker",
    "Vault",
    "CrowdStrike",
    "Remedy",
)
_PRODUCT = re.compile(r"\b(?:" + "|".join(re.escape(p) for p in PRODUCTS) + r")\b")
MEASURES = (
    "findings",
    "requirements_in_scope",
    "most_findings_per_requirement",
    "distinct_causes",
    "clean_recommendations",
    "poam_items",
    "nist_or_reason",
    "distinct_milestones",
    "resources_stated",
    "report_counts_equal",
    "contacts_agree",
)


def names_a_product(text: str) -> bool:
    return bool(URL.search(text) or _PRODUCT.search(text))


def requirements_in_scope(evidence: dict[str, Any]) -> set[str]:
    return {
        label_of(r.get("framework"), r.get("requirement_id"))
        for r in evidence.get("requirements", [])
        if r.get("applicable") is not False
    }


def finding_quality(evidence: dict[str, Any], gaps: dict[str, Any]) -> dict[str, float]:
    findings = gaps.get("gaps", [])
    per = Counter(str(g.get("control_id")) for g in findings)
    causes = {str(g.get("cause")) for g in findings}
    clean = [g for g in findings if not names_a_product(str(g.get("recommendation")))]
    total = len(findings) or 1
    return {
        "findings": len(findings),
        "requirements_in_scope": len(requirements_in_scope(evidence)),
        "most_findings_per_requirement": max(per.values(), default=0),
        "distinct_causes": len(causes) / total if findings else 1.0,
        "clean_recommendations": len(clean) / total if findings else 1.0,
    }


def poam_quality(poam: dict[str, Any]) -> dict[str, float]:
    items = poam.get("items", [])
    total = len(items) or 1
    nist = [i for i in items if i.get("nist_controls") or i.get("nist_basis")]
    milestones = {tuple(m["title"] for m in i.get("milestones", [])) for i in items}
    resources = [
        i
        for i in items
        if (i.get("resources_estimate") or {}).get("person_days") or i.get("resources_undecided")
    ]
    return {
        "poam_items": len(items),
        "nist_or_reason": len(nist) / total if items else 1.0,
        "distinct_milestones": len(milestones) / total if items else 1.0,
        "resources_stated": len(resources) / total if items else 1.0,
    }


def drafts_counts(evidence: dict[str, Any], gaps: dict[str, Any]) -> dict[str, int]:
    """The report's figures, counted again from the drafts themselves."""
    in_scope = [r for r in evidence.get("requirements", []) if r.get("applicable") is not False]
    findings = gaps.get("gaps", [])
    return {
        "Requirements assessed in scope (sub-items rolled up)": len(
            requirements_in_scope(evidence)
        ),
        "Requirements with evidence": len(requirements_in_scope(evidence)) - len(findings),
        "Gaps": len(findings),
        "Evidence rows in scope": len(in_scope),
    }


def report_counts(summary: dict[str, Any]) -> dict[str, int]:
    """The same figures as the report's JSON summary prints them."""
    return {
        "Requirements assessed in scope (sub-items rolled up)": int(
            summary["Requirements assessed in scope (sub-items rolled up)"]
        ),
        "Requirements with evidence": int(summary["Requirements with evidence"]),
        "Gaps": int(str(summary["Gaps (high / medium / low)"]).split()[0]),
        "Evidence rows in scope": int(
            str(
                summary["Evidence rows in scope (found / weak / none / unadopted template)"]
            ).split()[0]
        ),
    }


def contacts(exports: dict[str, Path]) -> tuple[dict[str, str], dict[str, str]]:
    """POAM ID -> point of contact, in the report's JSON and in the POA&M CSV."""
    document = json.loads(exports["json"].read_text())
    in_json = {str(i["id"]): str(i["point_of_contact"]) for i in document["poam"]["items"]}
    rows = list(csv.DictReader(io.StringIO(exports["poam_csv"].read_text(encoding="utf-8-sig"))))
    in_csv = {r["POAM ID"]: r["Point of Contact"] for r in rows}
    return in_json, in_csv


def report_quality(
    evidence: dict[str, Any], gaps: dict[str, Any], exports: dict[str, Path]
) -> dict[str, float]:
    summary = json.loads(exports["json"].read_text())["summary"]
    in_json, in_csv = contacts(exports)
    return {
        "report_counts_equal": float(report_counts(summary) == drafts_counts(evidence, gaps)),
        "contacts_agree": float(in_json == in_csv),
    }
