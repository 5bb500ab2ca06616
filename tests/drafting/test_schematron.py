"""The Schematron runner and NIST's JSON-to-XML converter that FedRAMP's rules run on
(tests/support/schematron.py, oscal_xml.py), on a small POA&M: the first rule whose
context matches a node fires, lets and diagnostics are evaluated in the rule's context,
reports fire, and what the runner does not do is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from saxonche import PySaxonProcessor

from tests.support.oscal_xml import OscalXml
from tests.support.schematron import Failure, Schematron

RISK, ITEM_I, ITEM_J, ITEM_K = (f"{n}1b9c0de-0000-4000-8000-00000000000{n}" for n in range(4))
SCHEMA = """<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron" queryBinding="xslt2">
  <sch:ns prefix="o" uri="http://csrc.nist.gov/ns/oscal/1.0"/>
  <sch:let name="risks" value="//o:risk/@uuid"/>
  <sch:pattern>
    <sch:rule context="o:poam-item[o:title = 'I']">
      <sch:assert id="first-rule" test="false()">the first rule fires for
        <sch:value-of select="o:title"/></sch:assert>
    </sch:rule>
    <sch:rule context="o:poam-item">
      <sch:let name="n" value="count(o:associated-risk)"/>
      <sch:assert id="has-risk" role="warning" test="$n gt 0" diagnostics="none">item
        <sch:value-of select="o:title"/> has a risk</sch:assert>
    </sch:rule>
  </sch:pattern>
  <sch:pattern>
    <sch:rule context="o:associated-risk">
      <sch:assert id="risk-known" test="@risk-uuid = $risks">the risk is known</sch:assert>
      <sch:report id="names-risk" test="true()">names <sch:value-of select="@risk-uuid"/>
      </sch:report>
    </sch:rule>
  </sch:pattern>
  <sch:diagnostics>
    <sch:diagnostic id="none">it has <sch:value-of select="$n"/></sch:diagnostic>
  </sch:diagnostics>
</sch:schema>"""


def _poam() -> dict[str, Any]:
    item = {"description": "Weakness."}
    return {
        "plan-of-action-and-milestones": {
            "uuid": "2b9c0de0-0000-4000-8000-000000000000",
            "metadata": {
                "title": "POA&M",
                "last-modified": "2025-03-01T00:00:00Z",
                "version": "1",
                "oscal-version": "1.1.2",
            },
            "risks": [
                {
                    "uuid": RISK,
                    "title": "Risk",
                    "description": "Risk.",
                    "statement": "Risk.",
                    "status": "open",
                }
            ],
            "poam-items": [  # I lacks a risk but only the first rule speaks of it
                {"uuid": ITEM_I, "title": "I", **item},
                {"uuid": ITEM_J, "title": "J", "related-risks": [{"risk-uuid": RISK}], **item},
                {"uuid": ITEM_K, "title": "K", **item},
            ],
        }
    }


@pytest.fixture(scope="module")
def saxon() -> Any:
    return PySaxonProcessor(license=False)


def test_the_first_matching_rule_fires_and_messages_are_evaluated_in_context(
    saxon: Any, tmp_path: Path
) -> None:
    source = tmp_path / "poam.json"
    source.write_text(json.dumps(_poam()))
    xml = tmp_path / "poam.xml"
    xml.write_text(OscalXml(saxon).convert("plan-of-action-and-milestones", source))
    schema = tmp_path / "rules.sch"
    schema.write_text(SCHEMA)
    rules = Schematron(saxon, schema)
    assert rules.assertions == ["first-rule", "has-risk", "risk-known", "names-risk"]
    assert rules.validate(xml) == [
        Failure("first-rule", "error", f"poam-item {ITEM_I}", "the first rule fires for I"),
        Failure("has-risk", "warning", f"poam-item {ITEM_K}", "item K has a risk | it has 0"),
        Failure("names-risk", "error", f"associated-risk {ITEM_J}", f"names {RISK}"),
    ]


def test_what_the_runner_does_not_do_is_refused(saxon: Any, tmp_path: Path) -> None:
    schema = tmp_path / "abstract.sch"
    schema.write_text(
        '<sch:schema xmlns:sch="http://purl.oclc.org/dsdl/schematron">'
        '<sch:pattern abstract="true" id="a"/></sch:schema>'
    )
    with pytest.raises(ValueError, match="not supported"):
        Schematron(saxon, schema)
