"""Scope: the SCF domains the selected framework brings into play, with their controls."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from workers.analysis.catalog import Catalog, load_catalog
from workers.analysis.output import publish
from workers.inputs import require_artifact, source


def create_scope(context: JobContext) -> JobResult:
    catalog = load_catalog()
    framework, domains = _framework(context, catalog)
    pre_analysis = require_artifact(context, ArtifactKind.SCF_PRE_ANALYSIS)
    found = {row["control_id"]: row for row in pre_analysis.content.get("controls", [])}
    in_scope = [_domain(catalog, code, found) for code in sorted(domains)]
    out_of_scope = [{"domain": code, "name": name,
                     "reason": f"{framework} does not cover this SCF domain"}
                    for code, name in sorted(catalog.domains.items()) if code not in domains]
    content = {
        "framework": framework,
        "source": source(pre_analysis),
        "domains": in_scope,
        "out_of_scope": out_of_scope,
        "summary": {"framework": framework, "domains_in_scope": len(in_scope),
                    "domains_out_of_scope": len(out_of_scope),
                    "controls_in_scope": sum(len(d["controls"]) for d in in_scope)},
    }
    return publish(context, ArtifactKind.SCOPE, content)


def _framework(context: JobContext, catalog: Catalog) -> tuple[str, tuple[str, ...]]:
    requested = context.request.parameters.get("framework")
    if not isinstance(requested, str) or not requested.strip():
        raise JobFailure("framework_missing", "the scope step needs a selected framework")
    match = catalog.framework(requested)
    if match is None:
        supported = ", ".join(catalog.frameworks)
        raise JobFailure("unknown_framework",
                         f"framework {requested!r} is not supported (supported: {supported})")
    return match


def _domain(catalog: Catalog, code: str, found: dict[str, dict[str, Any]]) -> dict[str, Any]:
    controls = [{**control.header(),
                 "best_score": found.get(control.id, {}).get("best_score", 0.0),
                 "coverage": found.get(control.id, {}).get("coverage", "none")}
                for control in catalog.controls if control.domain == code]
    return {"domain": code, "name": catalog.domains[code], "controls": controls}
