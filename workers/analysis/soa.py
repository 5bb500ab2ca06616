"""Statement of Applicability: every control of an in-scope domain, applicable or not, and why."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobFailure, JobResult
from workers.analysis.output import publish
from workers.inputs import require_artifact, source

_FOUND = {
    "strong": "the pre-analysis found documentation addressing it (score {score:.2f})",
    "partial": "the pre-analysis found partial documentation (score {score:.2f}); "
    "evidence analysis will confirm it",
    "none": "no uploaded document addresses it yet, so it will be assessed as a potential gap",
}


def create_soa_draft(context: JobContext) -> JobResult:
    scope = require_artifact(context, ArtifactKind.SCOPE)
    framework = scope.content.get("framework", "SCF")
    exclusions = _exclusions(context)
    controls = [
        _entry(framework, domain, control, exclusions)
        for domain in scope.content.get("domains", [])
        for control in domain.get("controls", [])
    ]
    listed = {control["control_id"] for control in controls}
    applicable = sum(1 for control in controls if control["applicable"])
    content = {
        "framework": framework,
        "catalog": scope.content.get("catalog"),
        "attribution": scope.content.get("attribution"),
        "source": source(scope),
        "controls": controls,
        "ignored_exclusions": sorted(set(exclusions) - listed),
        "summary": {
            "controls": len(controls),
            "applicable": applicable,
            "not_applicable": len(controls) - applicable,
        },
    }
    return publish(context, ArtifactKind.SOA, content)


def _exclusions(context: JobContext) -> dict[str, str]:
    """Controls a person declared not applicable: {control id: justification}."""
    raw = context.request.parameters.get("exclusions") or {}
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in raw.items()
    ):
        raise JobFailure(
            "bad_request", "exclusions must map control ids to non-empty justifications"
        )
    return {key.strip().upper(): value.strip() for key, value in raw.items()}


def _entry(
    framework: str, domain: dict[str, Any], control: dict[str, Any], exclusions: dict[str, str]
) -> dict[str, Any]:
    entry = {
        key: control.get(key)
        for key in ("control_id", "domain", "domain_name", "title", "requirements")
    }
    reason = exclusions.get(str(control.get("control_id")))
    if reason is not None:
        return {**entry, "applicable": False, "justification": f"Excluded: {reason}"}
    found = _FOUND.get(control.get("coverage", "none"), _FOUND["none"])
    through = ", ".join(control.get("requirements") or []) or framework
    justification = (
        f"In scope through {through}; " + found.format(score=control.get("best_score", 0.0)) + "."
    )
    return {**entry, "applicable": True, "justification": justification}
