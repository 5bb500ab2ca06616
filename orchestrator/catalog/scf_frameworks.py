"""The frameworks an SCF workbook crosswalks to, named the way assessors name them.

Each mapping column is one framework; its requirements are the ids written in the column
and each links to the SCF controls on whose rows it appears. Two columns combine into
ISO/IEC 27001: the 27001 column holds the clauses (4.1 ... 10.2) and the 27002 column the
controls that are ISO/IEC 27001 Annex A ("5.1" there is Annex A control "A.5.1", distinct
from clause 5.1). Names carry versions ("ISO/IEC 27001:2022", "PCI DSS 4.0").
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from orchestrator.catalog.model import (
    SCF_ATTRIBUTION,
    SCF_LICENCE,
    SCF_NAME,
    CatalogControl,
    CatalogInfo,
    Framework,
    LoadedCatalog,
    Requirement,
    catalog_id_for,
    framework_id_for,
)
from orchestrator.catalog.scf_workbook import MappingLink, ScfWorkbook

# Curated names for the columns people ask for most: loose header -> (name, version, aliases).
_CURATED: dict[str, tuple[str, str, tuple[str, ...]]] = {
    "aicpatsc2017soc2": (
        "SOC 2",
        "TSC 2017",
        ("AICPA TSC 2017", "AICPA SOC 2", "TSC 2017", "Trust Services Criteria"),
    ),
    "nistcsfv11": (
        "NIST CSF 1.1",
        "1.1",
        ("NIST CSF", "NIST Cybersecurity Framework 1.1", "CSF 1.1"),
    ),
    "pcidssv40": ("PCI DSS 4.0", "4.0", ("PCI DSS", "PCI-DSS 4.0")),
    "pcidssv32": ("PCI DSS 3.2", "3.2", ()),
    "ushipaa": ("HIPAA", "", ("HIPAA Security Rule",)),
    "emeaeugdpr": ("GDPR", "", ("EU GDPR", "General Data Protection Regulation")),
    "emeaukgdpr": ("UK GDPR", "", ()),
    "ciscscv80": ("CIS Controls 8.0", "8.0", ("CIS CSC 8", "CIS Controls")),
}
# Annex A of ISO/IEC 27001 is the control set of ISO/IEC 27002 of the same edition.
_ANNEX_A = {
    "2022": re.compile(r"^[5-8]\.\d+$"),
    "2013": re.compile(r"^(?:[5-9]|1[0-8])\.\d+\.\d+$"),
}
_NIST_SP = re.compile(r"^NIST (800-\d+\w*)(?: rev ?(\d+))?(?: \(([^)]+)\))?(.*)$")
_ISO = re.compile(r"^ISO (\d+) v(\d{4})$")
_REGION = re.compile(r"^(?:US|EMEA|APAC|Americas)(?: ?- ?| )")


def catalog_from_workbook(workbook: ScfWorkbook, *, sha256: str, source_name: str) -> LoadedCatalog:
    """The workbook as a catalogue version: controls verbatim and its frameworks."""
    info = CatalogInfo(
        id=catalog_id_for(SCF_NAME, workbook.release, sha256),
        kind="scf_workbook",
        name=SCF_NAME,
        version=workbook.release,
        source_name=source_name,
        sha256=sha256,
        licence=SCF_LICENCE,
        attribution=SCF_ATTRIBUTION,
    )
    controls = tuple(
        CatalogControl(
            id=c.id,
            domain=c.domain,
            domain_name=c.domain_name,
            title=c.name,
            description=c.description,
            details={
                "question": c.question,
                "methods_to_comply": c.methods_to_comply,
                "weighting": c.weighting,
                "sp_cmm": list(c.sp_cmm),
                "erl_ids": list(c.erl_ids),
            },
        )
        for c in workbook.controls
    )
    details = {
        "release": workbook.release,
        "domains": [
            {
                "identifier": d.identifier,
                "name": d.name,
                "principle": d.principle,
                "intent": d.intent,
            }
            for d in workbook.domains
        ],
        "evidence_requests": [
            {
                "erl_id": e.erl_id,
                "area_of_focus": e.area_of_focus,
                "artifact": e.artifact,
                "description": e.description,
                "control_ids": list(e.control_ids),
            }
            for e in workbook.evidence_requests
        ],
    }
    frameworks = tuple(_frameworks(info, workbook))
    return LoadedCatalog(info=info, controls=controls, frameworks=frameworks, details=details)


def scf_framework_name(header: str, version: str) -> tuple[str, str, tuple[str, ...]]:
    """(name, version, aliases) for one mapping column."""
    curated = _CURATED.get(_loose(header))
    if curated is not None:
        name, curated_version, aliases = curated
        return name, curated_version, (header, *aliases)
    nist = _NIST_SP.match(header)
    if nist:
        number, revision, level, rest = nist.groups()
        name = f"NIST SP {number}" + (f" rev{revision}" if revision else "")
        if level:
            name += " " + (level.title() if level.islower() else level)
        # The current revision also answers without it ("NIST SP 800-53 Moderate").
        current = (
            (name.replace(" rev5", "") + rest,) if number == "800-53" and revision == "5" else ()
        )
        return name + rest, version, (header, *current)
    iso = _ISO.match(header)
    if iso:
        number, year = iso.groups()
        prefix = "ISO/IEC" if number.startswith("27") else "ISO"
        return f"{prefix} {number}:{year}", year, (header, f"ISO {number}:{year}")
    bare = _REGION.sub("", header)
    return header, version, (header, bare) if bare != header else (header,)


def _loose(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def requirement_of(requirement_id: str) -> str:
    """ "6.1.2(a)(1)" -> "6.1.2"; "A.5.7" and "CC6.1" are their own requirement. Drafts
    assess a requirement once, its lettered sub-items named inside it."""
    return requirement_id.split("(", 1)[0].strip() or requirement_id


def requirement_sort_key(requirement_id: str) -> tuple[tuple[int, int | str], ...]:
    """Natural order: 5.2 before 5.10, CC1.2 before CC10.1."""
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part)
        for part in re.findall(r"\d+|\D+", requirement_id)
    )


def _frameworks(info: CatalogInfo, workbook: ScfWorkbook) -> Iterable[Framework]:
    position = {c.id: i for i, c in enumerate(workbook.controls)}
    by_column: dict[str, list[MappingLink]] = defaultdict(list)
    for link in workbook.links:
        by_column[link.framework].append(link)
    yield Framework(
        id=framework_id_for(info.id, "SCF"),
        catalog_id=info.id,
        name="SCF",
        version=workbook.release,
        kind="scf",
        requirements=tuple(Requirement(c.id, c.name, (c.id,)) for c in workbook.controls),
        details={
            "aliases": ["Secure Controls Framework", SCF_NAME, f"SCF {workbook.release}"],
            "description": "every control of the catalogue",
        },
    )
    iso_parts = {"ISO 27001 v2022", "ISO 27001 v2013"}
    for column in workbook.mapping_columns:
        links = by_column.get(column.framework, [])
        if column.header in iso_parts:
            edition = column.version
            annex = next(
                (c for c in workbook.mapping_columns if c.header == f"ISO 27002 v{edition}"), None
            )
            annex_links = by_column.get(annex.framework, []) if annex else []
            yield _iso_27001(info, column.header, edition, links, annex_links, position)
            continue
        name, version, aliases = scf_framework_name(column.header, column.version)
        yield _framework(
            info,
            name,
            version,
            "scf_mapping",
            links,
            position,
            {
                "aliases": list(aliases),
                "columns": [column.header],
                **_source(workbook, column.header),
            },
        )


def _iso_27001(
    info: CatalogInfo,
    header: str,
    edition: str,
    clauses: list[MappingLink],
    annex: list[MappingLink],
    position: dict[str, int],
) -> Framework:
    pattern = _ANNEX_A[edition] if edition in _ANNEX_A else re.compile(r"^$")
    annex_a = [
        MappingLink(
            framework=link.framework,
            version=link.version,
            requirement_id=f"A.{link.requirement_id}",
            control_id=link.control_id,
        )
        for link in annex
        if pattern.match(link.requirement_id)
    ]
    name = f"ISO/IEC 27001:{edition}"
    aliases = [f"ISO 27001:{edition}", header, f"ISO 27001 {edition}"]
    if edition == "2022":
        aliases += ["ISO 27001", "ISO/IEC 27001"]
    framework = _framework(
        info,
        name,
        edition,
        "scf_mapping",
        [*clauses, *annex_a],
        position,
        {
            "aliases": aliases,
            "columns": [header, f"ISO 27002 v{edition}"],
            "annex_a_from": f"ISO 27002 v{edition}",
        },
    )
    return framework


def _framework(
    info: CatalogInfo,
    name: str,
    version: str,
    kind: str,
    links: list[MappingLink],
    position: dict[str, int],
    details: dict[str, object],
) -> Framework:
    controls: dict[str, set[str]] = defaultdict(set)
    for link in links:
        controls[link.requirement_id].add(link.control_id)
    requirements = tuple(
        Requirement(
            id=rid, title="", control_ids=tuple(sorted(ids, key=lambda c: position.get(c, 0)))
        )
        for rid, ids in sorted(controls.items(), key=lambda kv: requirement_sort_key(kv[0]))
    )
    return Framework(
        id=framework_id_for(info.id, name),
        catalog_id=info.id,
        name=name,
        version=version,
        kind=kind,
        requirements=requirements,
        details=details,
    )


def _source(workbook: ScfWorkbook, header: str) -> dict[str, str]:
    loose = _loose(header)
    source = next(
        (s for s in workbook.authoritative_sources if _loose(s.mapping_column) == loose), None
    )
    if source is None:
        return {}
    return {
        "authority": source.source,
        "title": source.name,
        "url": source.url,
        "geography": source.geography,
    }
