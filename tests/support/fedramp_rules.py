"""FedRAMP's published Rev5 OSCAL rules (GSA/fedramp-automation, the Schematron of
src/validations/rules/rev5) run on the OSCAL JSON exports.

The rules read OSCAL XML: each export is converted with NIST's converter and written, as
XML, at its own file name in a folder laid out like the export folder, so that the hrefs
between the exports (the results import the plan by a relative path) resolve as they do
beside the JSON. The rule files are test data in `shared/data/fedramp/`: `poam.sch`,
`sap.sch` and `sar.sch` in `validations/rev5/` (GSA/fedramp-automation
`src/validations/rules/rev5/`) and, in `resources/xml/`, the `fedramp_values.xml` registry
that `sar.sch` reads (`src/content/rev5/resources/xml/`),
public domain (US Gov) and CC0-1.0; checked at commit c784140bc6d1ac9fa159aabc0e8a29e9aa2c63a9.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from saxonche import PySaxonProcessor

from tests.support.oscal_xml import OscalXml
from tests.support.schematron import Failure, Schematron

#: Export kind -> (the rules for it, the OSCAL model it holds).
RULES = {
    "oscal_poam": ("poam.sch", "plan-of-action-and-milestones"),
    "oscal_assessment_plan": ("sap.sch", "assessment-plan"),
    "oscal_assessment_results": ("sar.sch", "assessment-results"),
}
REGISTRY = "fedramp_values.xml"


@dataclass(frozen=True)
class Verdict:
    """What one rule file said of one export."""

    rules: str
    assertions: int
    failures: list[Failure]

    def failed(self) -> dict[str, list[Failure]]:
        by_id: dict[str, list[Failure]] = {}
        for failure in self.failures:
            by_id.setdefault(failure.id, []).append(failure)
        return by_id


def missing(folder: Path, registry: Path) -> list[str]:
    rules = [folder / name for name, _ in RULES.values()] + [registry / REGISTRY]
    return [str(path) for path in rules if not path.is_file()]


def run_fedramp_rules(
    folder: Path, registry: Path, exports: dict[str, Path], work: Path
) -> dict[str, Verdict]:
    """`folder`: the rule files; `registry`: the folder of FedRAMP's allowed values;
    `exports`: kind -> JSON file; `work`: where the XML goes."""
    saxon = PySaxonProcessor(license=False)
    converter = OscalXml(saxon)
    root = Path(os.path.commonpath([str(exports[kind].parent) for kind in RULES]))
    written: dict[str, Path] = {}
    for kind, (_, model) in RULES.items():
        target = work / exports[kind].relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(converter.convert(model, exports[kind]), encoding="utf-8")
        written[kind] = target
    verdicts: dict[str, Verdict] = {}
    for kind, (rules, _) in RULES.items():
        schema = Schematron(saxon, folder / rules, {"registry-base-path": str(registry)})
        verdicts[kind] = Verdict(rules, len(schema.assertions), schema.validate(written[kind]))
    return verdicts
