"""NIST SP 800-53 rev5 control ids for SCF controls, read from the SCF workbook's own
mapping column ("NIST 800-53 rev5"): the catalogue's crosswalk, never a guess. FedRAMP's
POA&M and OSCAL name NIST controls, while the analysis works in SCF controls."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from orchestrator.catalog.model import LoadedCatalog
from orchestrator.catalog.scf_frameworks import requirement_sort_key

FRAMEWORK = "NIST SP 800-53 rev5"
#: NIST's own OSCAL catalogue of SP 800-53 rev5 (public domain), which the ids resolve in.
CATALOG_HREF = (
    "https://raw.githubusercontent.com/usnistgov/oscal-content/main/nist.gov/SP800-53/"
    "rev5/json/NIST_SP-800-53_rev5_catalog.json"
)
_ENHANCEMENT = re.compile(r"^([A-Z]{2})-(\d+)(?:\((\d+)\))?$")


def nist_by_scf(catalog: LoadedCatalog) -> dict[str, tuple[str, ...]]:
    """SCF control id -> the NIST SP 800-53 rev5 ids its workbook row maps to."""
    framework = catalog.framework(FRAMEWORK)
    found: dict[str, set[str]] = {}
    for requirement in framework.requirements if framework else ():
        if not _ENHANCEMENT.match(requirement.id):
            continue  # a cell note, not a control id
        for control_id in requirement.control_ids:
            found.setdefault(control_id, set()).add(requirement.id)
    return {scf: tuple(sorted(ids, key=requirement_sort_key)) for scf, ids in found.items()}


def nist_ids(crosswalk: Mapping[str, Iterable[str]], scf_ids: Iterable[str]) -> list[str]:
    """The NIST ids of several SCF controls, each once, in NIST's order."""
    ids = {nist for scf in scf_ids for nist in crosswalk.get(scf, ())}
    return sorted(ids, key=requirement_sort_key)


def oscal_control_id(nist_id: str) -> str:
    """ "AC-2(1)" as NIST's OSCAL catalogue names it: "ac-2.1"."""
    match = _ENHANCEMENT.match(nist_id.strip())
    if match is None:
        return nist_id.strip().lower()
    family, number, enhancement = match.groups()
    base = f"{family.lower()}-{int(number)}"
    return f"{base}.{int(enhancement)}" if enhancement else base


def nist_ids_with_basis(
    crosswalk: Mapping[str, Iterable[str]], scf_ids: Iterable[str]
) -> tuple[list[str], str]:
    """The NIST ids of the SCF controls and how they were reached: the controls' own
    mapping; else their base controls' (GOV-01.1 -> GOV-01: an enhancement sits under its
    control in both catalogues); else why there are none."""
    wanted = list(dict.fromkeys(scf_ids))
    if not wanted:
        return [], "no SCF control in scope links to the requirement, so none maps to NIST"
    own = nist_ids(crosswalk, wanted)
    if own:
        return own, f"the SCF workbook's NIST SP 800-53 rev5 mapping of {', '.join(wanted)}"
    bases = list(dict.fromkeys(scf.split(".", 1)[0] for scf in wanted if "." in scf))
    through = nist_ids(crosswalk, bases)
    if through:
        return through, (
            f"{', '.join(wanted)} have no NIST SP 800-53 rev5 mapping in the SCF workbook; "
            f"these are the mapping of their base controls {', '.join(bases)}"
        )
    return [], (
        f"the SCF workbook maps none of {', '.join(wanted)} (nor their base controls) to "
        "NIST SP 800-53 rev5: a person chooses the NIST control or records that none applies"
    )
