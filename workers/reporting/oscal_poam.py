"""The OSCAL plan of action and milestones, as FedRAMP's OSCAL POA&M guide writes one:
system-id, import-ssp, the tool that found the weaknesses (local definitions), one
observation, one risk (with a planned and a recommendation response, milestones with a
description) and one poam-item per POA&M item. A risk names the NIST controls it
impacts (FedRAMP's impacted-control-id), its likelihood and impact (FedRAMP facets, state
"initial"), its deadline and its remediation with the item's milestones. Closed items
stay, their risk closed. The register's risks people accepted from (or merged with) the
gap findings are risks of the POA&M too, related to the items of their findings, with
their likelihood and impact on the register's method and FedRAMP's scale. Each item,
its remediation and milestones name who answers for it (its owner once a person is set,
until then who approved the POA&M), each observation the tool and who approved the gap
analysis; the back-matter carries the approvals' seals."""

from __future__ import annotations

from typing import Any

from orchestrator.contracts.fedramp_settings import FEDRAMP_SYSTEM, SYSTEM_ID, refusal
from workers.analysis.nist_crosswalk import oscal_control_id
from workers.reporting.oscal_parts import (
    FEDRAMP_NS,
    NS,
    actors,
    clean,
    fedramp_as_written,
    metadata,
    responsible,
    ssp_href,
    stable_uuid,
)
from workers.reporting.oscal_people import approvers, named, poam_responsible
from workers.reporting.oscal_register_risks import register_risk, register_risks_by_finding
from workers.reporting.oscal_seals import seal_resources
from workers.reporting.poam_stated import stated_items
from workers.reporting.render import ReportInput

TOOL = "Assessment lifecycle evidence analysis"


def plan_of_action(report: ReportInput, moment: str) -> dict[str, Any]:
    from trestle.oscal.poam import PlanOfActionAndMilestones

    base = stable_uuid(report.title, report.as_of, "poam")
    tool = stable_uuid(base, "tool")
    observations: list[dict[str, Any]] = []
    risks: list[dict[str, Any]] = []
    items: list[dict[str, Any]] = []
    listed = [(i, "open") for i in stated_items(report.poam)]
    listed += [(i, "closed") for i in stated_items(report.poam, "closed_items")]
    # The people who approved the gap analysis confirmed what each observation records.
    confirmed = named(approvers(report, "gap_analysis"))
    # The register's risks people accepted from these findings, beside each item's own.
    held = [register_risk(base, r) for r in report.risks]
    of_finding = register_risks_by_finding(held, report.risks)
    risks.extend(held)
    for item, status in listed:
        key = str(item.get("id"))
        observation = stable_uuid(base, "observation", key)
        risk = stable_uuid(base, "risk", key)
        observations.append(_observation(observation, item, tool, confirmed))
        answers = poam_responsible(report, item)
        risks.append(_risk(risk, observation, item, status, tool, answers))
        items.append(
            {
                "uuid": stable_uuid(base, "item", key),
                "title": str(item.get("weakness_name")),
                "description": str(item.get("weakness") or item.get("weakness_name")),
                "props": [{"name": "POAM-ID", "ns": FEDRAMP_NS, "value": key}],
                "related-observations": [{"observation-uuid": observation}],
                "related-risks": [
                    {"risk-uuid": uuid}
                    for uuid in [risk, *of_finding.get(str(item.get("control_id")), [])]
                ],
                "origins": actors(named(answers)),
                "remarks": str(item.get("comments") or "") or None,
            }
        )
    document = {
        "uuid": base,
        "metadata": metadata(report, f"POA&M: {report.assessment_name}", moment),
        "import-ssp": ssp_href(report),
        "system-id": _system_id(report),
        "local-definitions": {
            "components": [
                {
                    "uuid": tool,
                    "type": "software",
                    "title": TOOL,
                    "description": "Examines the uploaded documents against the selected "
                    "frameworks through the SCF crosswalk and proposes what they show.",
                    "status": {"state": "operational"},
                }
            ]
        },
        "observations": observations or None,
        "risks": risks or None,
        "poam-items": items
        or [
            {
                "uuid": stable_uuid(base, "none"),
                "title": "No open items",
                "description": "The approved gap analysis has no gaps.",
            }
        ],
    }
    if seals := seal_resources(report):
        document["back-matter"] = {"resources": seals}
    model = PlanOfActionAndMilestones.model_validate(clean(document))
    dumped = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    fedramp_as_written(dumped)
    return {"plan-of-action-and-milestones": dumped}


def _system_id(report: ReportInput) -> dict[str, str]:
    """FedRAMP's id for the system; while the setting is empty or a placeholder, the
    assessment's own id, in this product's namespace (never FedRAMP's)."""
    if refusal(SYSTEM_ID, report.system_id) is None:
        return {"identifier-type": FEDRAMP_SYSTEM, "id": report.system_id.strip()}
    return {"identifier-type": NS, "id": report.assessment_id or report.title}


def _observation(
    uuid: str, item: dict[str, Any], tool: str, confirmed: list[str]
) -> dict[str, Any]:
    documents = [d for d in str(item.get("supporting_documents") or "").split("; ") if d]
    return {
        "uuid": uuid,
        "title": f"Observed: {item.get('control_id')}",
        "description": str(item.get("weakness") or item.get("weakness_name")),
        "methods": ["EXAMINE"],
        "types": ["finding"],
        "origins": [
            {
                "actors": [
                    {"type": "tool", "actor-uuid": tool},
                    *(origin["actors"][0] for origin in actors(confirmed) or []),
                ]
            }
        ],
        # FedRAMP: the collected time is the original detection date.
        "collected": f"{item.get('original_detection_date')}T00:00:00Z",
        "relevant-evidence": [{"description": f"Examined: {d}"} for d in documents] or None,
    }


def _risk(
    uuid: str,
    observation: str,
    item: dict[str, Any],
    status: str,
    tool: str,
    answers: dict[str, list[str]],
) -> dict[str, Any]:
    """`answers`: who answers for the item, by role: the remediation's origin and the
    people responsible for each milestone."""
    milestones = [
        {
            "uuid": stable_uuid(uuid, "milestone", m["date"], m["title"]),
            "type": "milestone",
            "title": m["title"],
            "description": f"{m['title']}, by {m['date']}.",
            "timing": {"on-date": {"date": f"{m['date']}T00:00:00Z"}},
            "responsible-roles": responsible(answers),
        }
        for m in item.get("milestones", [])
    ]
    return {
        "uuid": uuid,
        "title": str(item.get("weakness_name")),
        "description": str(item.get("weakness") or item.get("weakness_name")),
        "statement": str(item.get("remediation") or item.get("weakness_name")),
        "status": status,
        "props": [
            {"name": "impacted-control-id", "ns": FEDRAMP_NS, "value": oscal_control_id(c)}
            for c in item.get("nist_controls") or _split(item.get("controls"))
        ]
        or None,
        "characterizations": [
            {
                "origin": {"actors": [{"type": "tool", "actor-uuid": tool}]},
                "facets": [
                    _facet("likelihood", item.get("likelihood")),
                    _facet("impact", item.get("impact")),
                    {
                        "name": "priority",
                        "system": FEDRAMP_SYSTEM,
                        "value": str(item.get("priority") or "").removeprefix("P") or "1",
                    },
                ],
            }
        ],
        "deadline": f"{item.get('scheduled_completion_date')}T00:00:00Z",
        "remediations": [
            {
                "uuid": stable_uuid(uuid, "remediation"),
                "lifecycle": "planned",
                "title": "Remediation plan",
                "description": str(item.get("remediation") or "To be planned"),
                "origins": actors(named(answers)),
                "tasks": milestones or None,
            },
            {  # FedRAMP asks for the recommendation besides the plan.
                "uuid": stable_uuid(uuid, "recommendation"),
                "lifecycle": "recommendation",
                "title": "Recommendation",
                "description": str(item.get("remediation") or "To be planned"),
            },
        ],
        "related-observations": [{"observation-uuid": observation}],
    }


def _facet(name: str, value: Any) -> dict[str, Any]:
    return {
        "name": name,
        "system": FEDRAMP_SYSTEM,
        "value": str(value or "moderate"),
        "props": [{"name": "state", "value": "initial"}],
    }


def _split(controls: Any) -> list[str]:
    return [c.strip() for c in str(controls or "").split(",") if c.strip()]
