"""Scope: the requirements of the selected frameworks and the SCF controls they link to."""

from __future__ import annotations

from typing import Any

from orchestrator.catalog.categories import UnknownCategory, chosen
from orchestrator.catalog.matching import UnknownFramework, resolve_many
from orchestrator.catalog.scoping import draft_scope
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.jobs.interface import JobContext, JobFailure
from orchestrator.lifecycle.selection import selected_categories, selected_frameworks
from workers.analysis.catalog import run_catalogs
from workers.analysis.drafting import drafts
from workers.inputs import require_artifact, source


@drafts("scope")
def create_scope(context: JobContext) -> dict[str, Any]:
    names = selected_frameworks(context.request.parameters)
    if not names:
        raise JobFailure("framework_missing", "the scope step needs a selected framework")
    catalogs = run_catalogs(context)
    try:
        choices = resolve_many(catalogs, names)
    except UnknownFramework as error:
        # Refused at the door normally; a run from before the check can still get here.
        raise JobFailure("unknown_framework", str(error)) from error
    selection = selected_categories(context.request.parameters)
    if selection is None:
        raise JobFailure("bad_request", "categories must be a list of names or an object of lists")
    try:
        in_scope = chosen(selection, choices, catalogs)
    except UnknownCategory as error:
        raise JobFailure("unknown_category", str(error)) from error
    pre_analysis = require_artifact(context, ArtifactKind.SCF_PRE_ANALYSIS)
    found = {row["control_id"]: row for row in pre_analysis.content.get("controls", [])}
    content = {**draft_scope(catalogs, choices, found, in_scope), "source": source(pre_analysis)}
    return content
