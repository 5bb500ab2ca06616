"""People, not roles, on real documents: the demo samples and strongdm/comply's policies,
each assessed against SOC 2 with a roster of a few people and one document whose owner is
set; and the demo samples with no roster.

- every SoA row and gap finding proposes a person from the roster or from a cited
  document's owner, and says where the proposal came from; with no roster, a role,
  saying so;
- a reviewer's amendment confirms a finding's owner: its POA&M item names them as the
  point of contact; every other item names the proposed person, flagged as proposed, and
  the report's JSON and the POA&M CSV say the same;
- the report's SoA and findings tables show the owners.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from orchestrator.contracts.clock import set_clock
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Document
from orchestrator.demo.roster import CONFIRMED_OWNER, DEMO_ROSTER
from orchestrator.demo.run import DEMO_CATEGORIES, SAMPLES
from orchestrator.knowledge.embedder import set_default_embedder
from orchestrator.knowledge.minilm_onnx import shared_minilm
from orchestrator.service.amendments import amended_content
from orchestrator.service.evidence_life import set_document_life
from orchestrator.service.roster import add_person
from tests.support import draft_quality as quality
from tests.support.services import (
    FIXED_NOW,
    TENANT,
    USER,
    Kit,
    kit_database_for_this_process,
    open_kit,
)
from tests.support.shared_data import SHARED_DATA
from workers.reporting.render import GAP_HEADERS, SOA_HEADERS, gap_rows, soa_table

pytestmark = pytest.mark.realdata

COMPLY = SHARED_DATA / "policies" / "markdown" / "comply"
ROSTER = DEMO_ROSTER  # Dana (owner), Lee (IAM title), Sam (IRO and BCD)
#: The document whose owner is set, and who: Lee, by email (on the roster).
OWNED = {"demo": "access-control-policy.md", "comply": "access.md"}
DOCUMENT_OWNER = "lee.park@example.org"
CONFIRMED = CONFIRMED_OWNER
NAMES = {p.name for p in ROSTER}


@dataclass
class Case:
    kit: Kit
    source: str
    rostered: bool


def _documents(kit: Kit, source: str) -> dict[str, Document]:
    folder = SAMPLES if source == "demo" else COMPLY
    added = {}
    for path in sorted(folder.iterdir()):
        if path.suffix in (".md", ".txt"):
            media = "text/plain" if path.suffix == ".txt" else "text/markdown"
            added[path.name] = kit.add_document(path.name, path.read_bytes(), media_type=media)
    return added


def _run(kit: Kit, source: str, with_roster: bool) -> None:
    """The roster and a document's owner set through the services; through the gap
    analysis; a reviewer confirms the first finding's owner; then POA&M and report."""
    documents = _documents(kit, source)
    actor = Actor(tenant_id=TENANT, actor_id=USER)
    with pytest.MonkeyPatch.context() as patch, kit_database_for_this_process(kit, patch):
        if with_roster:
            for person in ROSTER:
                add_person(actor, kit.assessment.id, person)
            set_document_life(
                actor,
                kit.assessment.id,
                documents[OWNED[source]].id,
                owner=DOCUMENT_OWNER,
                effective_on=None,
                review_every_days=None,
                expires_on=None,
            )
        kit.run_through(Step.CREATE_GAP_ANALYSIS)
        gaps = kit.latest(K.GAP_ANALYSIS)
        assert gaps is not None and gaps.content["gaps"]
        first = gaps.content["gaps"][0]["control_id"]
        kit.add_artifact(
            K.GAP_ANALYSIS,
            amended_content(
                gaps.content,
                K.GAP_ANALYSIS.value,
                [{"row": first, "changes": {"owner": CONFIRMED}}],
                actor_id="user:reviewer",
                reason="owner agreed",
                based_on=gaps.version,
            ),
        )
        kit.session.commit()
        kit.run_through(Step.CREATE_REPORT, start=Step.CREATE_MATURITY_ASSESSMENT)


CASES = [("demo", True), ("demo", False), ("comply", True)]


@pytest.fixture(scope="module", params=CASES, ids=["demo-roster", "demo-no-roster", "comply"])
def case(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Case]:
    source, with_roster = request.param
    if source == "comply" and not COMPLY.is_dir():
        pytest.skip(f"the real policy set is absent ({COMPLY})")
    set_clock(lambda: FIXED_NOW)
    set_default_embedder(shared_minilm())
    try:
        with open_kit(tmp_path_factory.mktemp("owners")) as kit:
            kit.framework = "SOC 2"
            kit.categories = DEMO_CATEGORIES["SOC 2"]
            _run(kit, source, with_roster)
            yield Case(kit, source, with_roster)
    finally:
        set_clock(None)
        set_default_embedder(None)


def _proposals(kit: Kit) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return kit.content(K.SOA)["requirements"], kit.content(K.GAP_ANALYSIS)["gaps"]


def kit_summary(case: Case) -> dict[str, Any]:
    return dict(case.kit.content(K.SOA)["summary"])


def _person_share(rows: list[dict[str, Any]]) -> float:
    return sum(1 for r in rows if r.get("proposed_owner_kind") == "person") / max(len(rows), 1)


def _bases(rows: list[dict[str, Any]]) -> dict[str, int]:
    """How many proposals rest on each basis (a document's owner, a domain, a title...)."""
    found: dict[str, int] = {}
    for row in rows:
        basis = str(row["proposed_owner_source"]).split(":")[0].split(" (")[0]
        if basis == "roster":
            basis = " ".join(str(row["proposed_owner_source"]).split()[:4])
        found[basis] = found.get(basis, 0) + 1
    return found


def test_rows_and_findings_propose_people_and_say_where_from(case: Case) -> None:
    rows, findings = _proposals(case.kit)
    print(
        f"{case.source} roster={case.rostered}: person proposed as owner on "
        f"{_person_share(rows):.2f} of {len(rows)} SoA rows, {_person_share(findings):.2f} of "
        f"{len(findings)} findings; proposed from {_bases(rows + findings)}"
    )
    owned = OWNED[case.source]
    for row in [*rows, *findings]:
        source = str(row["proposed_owner_source"])
        if not case.rostered:
            assert row["proposed_owner_kind"] == "role", row
            assert source.startswith("role, not a person: the assessment has no roster")
            continue
        assert row["proposed_owner_kind"] == "person", row
        assert row["proposed_owner"] in NAMES, row
        assert row["proposed_owner_person"]["name"] == row["proposed_owner"]
        domains = {str(c).split("-")[0] for c in row["scf_controls"]}
        if source.startswith("owner of the cited document"):
            assert owned in source and row["proposed_owner"] == "Lee Park"
            cited = row.get("documents") or [e["document"] for e in row.get("evidence") or []]
            assert owned in cited
        elif source.startswith("roster: owns the SCF"):
            assert row["proposed_owner"] == "Sam Ortiz" and domains & {"IRO", "BCD"}
        elif source.startswith("roster: their title"):
            assert row["proposed_owner"] == "Lee Park" and "IAC" in domains
        else:
            assert source.startswith("roster: the assessment's control owner"), source
    assert kit_summary(case)["proposed_owners"] == {
        "person": len(rows) if case.rostered else 0,
        "role": 0 if case.rostered else len(rows),
    }
    if case.rostered:
        sources = {str(r["proposed_owner_source"]).split(" (")[0][:28] for r in rows}
        assert any(s.startswith("owner of the cited document") for s in sources), sources
        assert _person_share(rows) == 1.0 and _person_share(findings) == 1.0


def test_poam_contacts_are_people_flagged_until_confirmed_and_exports_agree(case: Case) -> None:
    kit = case.kit
    poam = kit.content(K.POAM)
    confirmed = kit.content(K.GAP_ANALYSIS)["gaps"]
    owners = {g["control_id"]: g.get("owner") for g in confirmed}
    for item in poam["items"]:
        if owners.get(item["control_id"]):
            assert item["point_of_contact"] == CONFIRMED and item["owner_assigned"]
            assert not item["point_of_contact_proposed"]
        elif case.rostered:
            assert item["point_of_contact"] == f"{item['proposed_owner']} (proposed)"
            assert item["proposed_owner"] in NAMES and item["point_of_contact_proposed"]
        else:
            assert item["point_of_contact"].startswith("Unassigned (proposed role: ")
    assert CONFIRMED in owners.values()
    exports = {e["kind"]: Path(e["path"]) for e in kit.content(K.REPORT)["exports"]}
    in_json, in_csv = quality.contacts(exports)
    assert in_json == in_csv == {i["id"]: i["point_of_contact"] for i in poam["items"]}
    document = json.loads(exports["json"].read_text())
    assert document["gaps"]["gaps"][0]["owner"] == CONFIRMED


def test_the_report_shows_owners(case: Case) -> None:
    kit = case.kit
    report = kit.report_input(poam=kit.content(K.POAM))
    column = GAP_HEADERS.index("Owner")
    shown = [row[column] for row in gap_rows(report)]
    assert CONFIRMED in shown
    soa_owners = [row[SOA_HEADERS.index("Owner")] for row in soa_table(report)]
    assert all(soa_owners)
    if case.rostered:
        assert all(s == CONFIRMED or s.endswith(" (proposed)") for s in shown), shown
        assert {s.removesuffix(" (proposed)") for s in soa_owners} <= NAMES
    else:
        assert all(s.startswith("Unassigned (proposed role: ") for s in soa_owners)
    html = Path(kit.content(K.REPORT)["path"]).read_text()
    assert CONFIRMED in html
