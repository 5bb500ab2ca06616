"""The role that usually runs the SCF domain of a requirement's first linked control: the
owner proposed only when the assessment has no roster and no cited document has an owner
(workers.analysis.owner_proposal), and the title a roster entry is matched against."""

from __future__ import annotations

from collections.abc import Sequence

OWNER_ROLES = {
    "AST": "IT Asset Manager",
    "BCD": "Business Continuity Manager",
    "CFG": "Infrastructure Lead",
    "CHG": "Change Manager",
    "CPL": "Compliance Officer",
    "CRY": "Security Architect",
    "DCH": "Data Protection Officer",
    "END": "Endpoint Lead",
    "GOV": "CISO",
    "HRS": "HR Director",
    "IAC": "Identity & Access Manager",
    "IRO": "Incident Response Lead",
    "MON": "SOC Manager",
    "NET": "Network Security Lead",
    "OPS": "IT Operations Manager",
    "PES": "Facilities Manager",
    "PRI": "Data Protection Officer",
    "RSK": "Risk Manager",
    "SAT": "Security Awareness Lead",
    "SEA": "Security Architect",
    "TPM": "Vendor Risk Manager",
    "VPM": "Vulnerability Management Lead",
}
DEFAULT_OWNER = "CISO"


def proposed_owner(control_ids: Sequence[str]) -> str:
    domain = str(control_ids[0]).split("-")[0] if control_ids else ""
    return OWNER_ROLES.get(domain, DEFAULT_OWNER)
