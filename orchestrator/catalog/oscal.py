"""NIST OSCAL catalogues and baseline profiles, read with compliance-trestle's OSCAL models.

A catalog (SP 800-53 rev5) becomes a catalogue version whose controls are the catalog's
controls and enhancements (label "AC-2(1)", title, statement prose verbatim, parameters
left as written) and whose one framework holds every control not withdrawn. A profile
(the LOW or MODERATE baseline) becomes a catalogue version of its own with one framework:
the controls it selects from the catalog it imports. Both link to SCF controls through the
SCF workbook's 800-53 rev5 column (the framework's `crosswalk`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError
from trestle.oscal.catalog import Catalog, Control
from trestle.oscal.common import Part
from trestle.oscal.profile import Profile

from orchestrator.catalog.model import (
    CatalogControl,
    CatalogInfo,
    Framework,
    LoadedCatalog,
    Requirement,
    catalog_id_for,
    framework_id_for,
)
from orchestrator.contracts.errors import FleetError

NIST_LICENCE = "Public domain (US Government work, 17 U.S.C. 105)"
NIST_ATTRIBUTION = (
    "NIST Special Publication 800-53 Revision 5, National Institute of "
    "Standards and Technology; OSCAL content from usnistgov/oscal-content"
)
#: A control's detail holding its SP 800-53A objectives and EXAMINE method (OSCAL parts).
SP800_53A = "sp800_53a"
_SP_800_53 = re.compile(r"800-53\D+?(?:Revision|Rev\.?|rev)\s*(\d+)", re.I)
_BASELINE = re.compile(r"\b(LOW|MODERATE|HIGH|PRIVACY)\b", re.I)


class OscalFormatError(FleetError, ValueError):
    """Not an OSCAL catalog or profile this importer understands; the message says why."""


def oscal_kind(path: Path) -> str:
    """ "catalog" or "profile", from the document's single top-level key."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise OscalFormatError(f"{path}: not readable OSCAL JSON ({exc})") from exc
    if not isinstance(document, dict):
        raise OscalFormatError(f"{path}: an OSCAL document is a JSON object")
    for kind in ("catalog", "profile"):
        if kind in document:
            return kind
    raise OscalFormatError(
        f"{path}: neither an OSCAL catalog nor a profile "
        f"(top-level keys: {', '.join(sorted(document)) or 'none'})"
    )


def _read(model: Any, path: Path) -> Any:
    try:
        return model.oscal_read(path)
    except ValidationError as exc:
        errors = exc.errors()
        where = ".".join(str(p) for p in errors[0]["loc"]) if errors else "?"
        message = errors[0]["msg"] if errors else ""
        raise OscalFormatError(
            f"{path}: not valid OSCAL ({exc.error_count()} error(s); first at {where}: {message})"
        ) from exc


def catalog_from_oscal(path: Path, *, sha256: str) -> LoadedCatalog:
    catalog: Catalog = _read(Catalog, path)
    metadata = catalog.metadata
    name = _catalog_name(metadata.title)
    version = str(metadata.version)
    info = _nist_info("oscal_catalog", name, version, path, sha256)
    controls = tuple(_controls(catalog))
    requirements = tuple(
        Requirement(id=c.id, title=c.title, control_ids=())
        for c in controls
        if not c.details.get("withdrawn")
    )
    framework = _framework(
        info,
        requirements,
        _crosswalk(name),
        {"aliases": [str(metadata.title)], "oscal_version": str(metadata.oscal_version)},
    )
    return LoadedCatalog(
        info=info,
        controls=controls,
        frameworks=(framework,),
        details={
            "title": str(metadata.title),
            "oscal_version": str(metadata.oscal_version),
            "uuid": str(catalog.uuid),
        },
    )


def profile_from_oscal(
    path: Path, *, sha256: str, catalogs: Sequence[LoadedCatalog]
) -> LoadedCatalog:
    """The profile as a catalogue version; its controls come from the newest stored catalog
    of the same publication (the profile's import points at that catalog by reference)."""
    profile: Profile = _read(Profile, path)
    metadata = profile.metadata
    base_name = _catalog_name(metadata.title)
    bases = [c for c in catalogs if c.info.kind == "oscal_catalog" and c.info.name == base_name]
    if not bases:
        raise OscalFormatError(
            f"{path}: profile {metadata.title!r} selects controls from "
            f"{base_name!r}; import that OSCAL catalog first"
        )
    base = bases[-1]
    by_oscal_id = {str(c.details.get("oscal_id")): c for c in base.controls}
    selected = _selected_ids(profile, by_oscal_id, path)
    level = _BASELINE.search(str(metadata.title))
    name = base_name + (f" {level.group(1).title()}" if level else "")
    version = str(metadata.version)
    info = _nist_info("oscal_profile", name, version, path, sha256)
    requirements = tuple(
        Requirement(id=by_oscal_id[i].id, title=by_oscal_id[i].title, control_ids=())
        for i in selected
    )
    framework = _framework(
        info,
        requirements,
        _crosswalk(base_name),
        {
            "aliases": [str(metadata.title), f"{name} baseline", name.replace(" rev5", "")],
            "base_catalog_id": str(base.id),
            "base_catalog_version": base.info.version,
        },
    )
    return LoadedCatalog(
        info=info,
        controls=(),
        frameworks=(framework,),
        details={
            "title": str(metadata.title),
            "base_catalog_id": str(base.id),
            "uuid": str(profile.uuid),
        },
    )


def _nist_info(kind: str, name: str, version: str, path: Path, sha256: str) -> CatalogInfo:
    """A NIST publication's catalogue version (`kind`: an OSCAL catalog or profile)."""
    return CatalogInfo(
        id=catalog_id_for(name, version, sha256),
        kind=kind,
        name=name,
        version=version,
        source_name=path.name,
        sha256=sha256,
        licence=NIST_LICENCE,
        attribution=NIST_ATTRIBUTION,
    )


def _framework(
    info: CatalogInfo,
    requirements: tuple[Requirement, ...],
    crosswalk: str | None,
    details: dict[str, Any],
) -> Framework:
    """The catalogue version's one framework, of its name, version and kind."""
    return Framework(
        id=framework_id_for(info.id, info.name),
        catalog_id=info.id,
        name=info.name,
        version=info.version,
        kind=info.kind,
        requirements=requirements,
        crosswalk=crosswalk,
        details=details,
    )


def _catalog_name(title: str) -> str:
    match = _SP_800_53.search(str(title))
    return f"NIST SP 800-53 rev{match.group(1)}" if match else str(title)


def _crosswalk(catalog_name: str) -> str | None:
    # The SCF workbook's column for this publication, as the SCF framework names it.
    return catalog_name if catalog_name.startswith("NIST SP 800-53 rev") else None


def _prop(control: Control, name: str) -> str | None:
    return next((str(p.value) for p in control.props or [] if p.name == name), None)


def _label(control: Control) -> str:
    """The label as SP 800-53 writes it ("AC-2(1)"); newer catalogs add zero-padded ones
    ("AC-02(01)") marked with a class."""
    labels = [p for p in control.props or [] if p.name == "label"]
    plain = next((p for p in labels if not p.class_), labels[0] if labels else None)
    return str(plain.value) if plain is not None else control.id.upper()


def _prose(parts: Sequence[Part] | None, depth: int = 0) -> Iterator[str]:
    for part in parts or []:
        label = next((str(p.value) for p in part.props or [] if p.name == "label"), "")
        text = " ".join(x for x in (label, part.prose or "") if x).strip()
        if text:
            yield "  " * depth + text
        yield from _prose(part.parts, depth + 1)


def _examination(control: Control) -> dict[str, Any]:
    """SP 800-53A's assessment objectives and its EXAMINE method's objects for the control,
    as the catalog's own parts (rev5 carries them): what an assessment plan examines."""
    parts = [
        part.model_dump(mode="json", by_alias=True, exclude_none=True)
        for part in control.parts or []
        if part.name == "assessment-objective"
        or (
            part.name == "assessment-method"
            and any(p.name == "method" and p.value == "EXAMINE" for p in part.props or [])
        )
    ]
    return {SP800_53A: parts} if parts else {}


def _controls(catalog: Catalog) -> Iterator[CatalogControl]:
    def walk(
        controls: Sequence[Control] | None, family: str, family_title: str, parent: str | None
    ) -> Iterator[CatalogControl]:
        for control in controls or []:
            label = _label(control)
            statement = [p for p in control.parts or [] if p.name == "statement"]
            yield CatalogControl(
                id=label,
                domain=family.upper(),
                domain_name=family_title,
                title=str(control.title),
                description="\n".join(_prose(statement)),
                details={
                    "oscal_id": control.id,
                    "parent": parent,
                    "withdrawn": _prop(control, "status") == "withdrawn",
                    "sort_id": _prop(control, "sort-id"),
                    **_examination(control),
                },
            )
            yield from walk(control.controls, family, family_title, label)

    for group in catalog.groups or []:
        yield from walk(getattr(group, "controls", None), str(group.id), str(group.title), None)
    yield from walk(catalog.controls, "", "", None)


def _selected_ids(profile: Profile, known: dict[str, CatalogControl], path: Path) -> list[str]:
    """The ids a profile selects: include-all or with-ids (and child controls), less
    exclusions, in catalogue order."""
    chosen: set[str] = set()
    for imported in profile.imports:
        if getattr(imported, "include_all", None) is not None:
            chosen |= set(known)
        for selection in getattr(imported, "include_controls", None) or []:
            if selection.matching:
                raise OscalFormatError(f"{path}: selection by pattern is not supported")
            ids = {str(getattr(i, "root", i)) for i in selection.with_ids or []}
            if (
                selection.with_child_controls
                and str(
                    getattr(selection.with_child_controls, "value", selection.with_child_controls)
                )
                == "yes"
            ):
                ids |= {k for k, c in known.items() if any(k.startswith(f"{i}.") for i in ids)}
            chosen |= ids
        for exclusion in getattr(imported, "exclude_controls", None) or []:
            chosen -= {str(getattr(i, "root", i)) for i in exclusion.with_ids or []}
    missing = sorted(chosen - set(known))
    if missing:
        raise OscalFormatError(
            f"{path}: the profile selects {len(missing)} control(s) the "
            f"catalog does not have: {', '.join(missing[:10])}"
        )
    order = {k: i for i, k in enumerate(known)}
    return sorted(chosen, key=order.__getitem__)
