"""ISO Schematron run on Saxon-HE (saxonche): a schema becomes an XSLT 3.0 stylesheet,
which reports every failed assert and every fired report with its id, role and text.

It covers what FedRAMP's OSCAL rules use (namespaces, global and rule variables,
`xsl:param`, patterns whose first matching rule fires per node, asserts and reports with
`value-of` and `name`, diagnostics) and refuses the rest (includes, abstract patterns,
phases) rather than ignoring it.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lxml import etree

SCH = "http://purl.oclc.org/dsdl/schematron"
XSL = "http://www.w3.org/1999/XSL/Transform"
XS = "http://www.w3.org/2001/XMLSchema"
#: What this translation does not do: sch:include, sch:extends, abstract patterns and
#: rules, a default phase (without one, every pattern runs, as here).
_UNSUPPORTED = "//sch:include | //sch:extends | //@abstract | //@is-a | /*/@defaultPhase"


@dataclass(frozen=True)
class Failure:
    """A failed assert (or a fired report): where, and what the rule says."""

    id: str
    role: str
    where: str  # the context's element name and its nearest uuid
    text: str  # the assertion's text, then its diagnostics


class Schematron:
    """One compiled schema; `validate` runs it on an XML file."""

    def __init__(self, saxon: Any, schema: Path, params: dict[str, str] | None = None) -> None:
        self._saxon = saxon
        tree = etree.parse(str(schema))
        self.assertions = [
            str(a.get("id")) for a in tree.iter(f"{{{SCH}}}assert", f"{{{SCH}}}report")
        ]
        compiler = saxon.new_xslt30_processor()
        self._executable = compiler.compile_stylesheet(stylesheet_text=to_xslt(tree))
        for name, value in (params or {}).items():
            self._executable.set_parameter(name, saxon.make_string_value(value))

    def validate(self, document: Path) -> list[Failure]:
        # From the file, so that base-uri() and the rules' relative hrefs resolve beside it.
        node = self._saxon.parse_xml(xml_file_name=str(document))
        self._executable.set_global_context_item(xdm_item=node)
        out = self._executable.apply_templates_returning_string(xdm_value=node)
        return [
            Failure(str(f.get("id")), str(f.get("role")), str(f.get("where")), _words(f.text))
            for f in etree.fromstring(out.encode())
        ]


def _words(text: str | None) -> str:
    return " ".join((text or "").split())


def to_xslt(schema: etree._ElementTree) -> str:
    root = schema.getroot()
    if root.xpath(_UNSUPPORTED, namespaces={"sch": SCH}):
        raise ValueError(f"{schema.docinfo.URL} uses Schematron that is not supported here")
    namespaces = {str(n.get("prefix")): str(n.get("uri")) for n in root.iter(f"{{{SCH}}}ns")}
    xslt = etree.Element(
        f"{{{XSL}}}stylesheet", nsmap={"xsl": XSL, "xs": XS, **namespaces}, version="3.0"
    )
    diagnostics = {str(d.get("id")): d for d in root.iter(f"{{{SCH}}}diagnostic")}
    patterns = root.findall(f"{{{SCH}}}pattern")
    start = _xsl(xslt, "template", match="/")
    out = etree.SubElement(start, "failures")
    # Lets of the schema and of its patterns are global, as in ISO's own implementation.
    for child in [*root, *(c for p in patterns for c in p)]:
        if child.tag == f"{{{SCH}}}let":
            _let(xslt, child)
        elif isinstance(child.tag, str) and child.tag.startswith(f"{{{XSL}}}"):
            xslt.append(copy.deepcopy(child))  # xsl:param, xsl:function, xsl:key
    for index, pattern in enumerate(patterns):
        mode = f"pattern-{index}"
        _xsl(out, "apply-templates", select="/", mode=mode)
        rules = pattern.findall(f"{{{SCH}}}rule")
        for rank, rule in enumerate(rules):
            # The first rule whose context matches fires: earlier rules rank higher.
            template = _xsl(
                xslt, "template", match=str(rule.get("context")), mode=mode,
                priority=str(len(rules) - rank),
            )  # fmt: skip
            _rule_body(template, rule, diagnostics)
            _xsl(template, "apply-templates", select="@*|*", mode=mode)
        walk = _xsl(xslt, "template", match="/|@*|node()", mode=mode, priority="-1")
        _xsl(walk, "apply-templates", select="@*|*", mode=mode)
    return etree.tostring(xslt, encoding="unicode")


def _rule_body(
    template: etree._Element, rule: etree._Element, diagnostics: dict[str, etree._Element]
) -> None:
    for child in rule:
        if child.tag == f"{{{SCH}}}let":
            _let(template, child)
        elif child.tag in (f"{{{SCH}}}assert", f"{{{SCH}}}report"):
            test = str(child.get("test"))
            fails = f"not({test})" if child.tag == f"{{{SCH}}}assert" else test
            branch = _xsl(template, "if", test=fails)
            failed = etree.SubElement(branch, "failed", id=_avt(child.get("id") or "-"))
            failed.set("role", _avt(child.get("role") or "error"))
            where = _xsl(failed, "attribute", name="where")
            _xsl(where, "value-of", select="local-name(), (ancestor-or-self::*/@uuid)[last()]")
            _message(failed, child)
            for ref in (child.get("diagnostics") or "").split():
                _xsl(failed, "text").text = " | "
                _message(failed, diagnostics[ref])


def _message(parent: etree._Element, text: etree._Element) -> None:
    """An assertion's or diagnostic's mixed content, its expressions evaluated in place."""
    _text(parent, text.text)
    for part in text:
        if part.tag == f"{{{SCH}}}value-of":
            _xsl(parent, "value-of", select=str(part.get("select")))
        elif part.tag == f"{{{SCH}}}name":
            _xsl(parent, "value-of", select=f"name({part.get('path') or '.'})")
        else:  # emph, dir, span: their text
            _text(parent, part.text)
        _text(parent, part.tail)


def _text(parent: etree._Element, text: str | None) -> None:
    if text:
        _xsl(parent, "text").text = re.sub(r"\s+", " ", text)


def _let(parent: etree._Element, let: etree._Element) -> None:
    value = let.get("value")
    if value is None:
        raise ValueError(f"let {let.get('name')} has no value attribute")
    _xsl(parent, "variable", name=str(let.get("name")), select=value)


def _xsl(parent: etree._Element, tag: str, /, **attributes: str) -> etree._Element:
    return etree.SubElement(parent, f"{{{XSL}}}{tag}", attributes)


def _avt(value: str) -> str:
    return value.replace("{", "{{").replace("}", "}}")
