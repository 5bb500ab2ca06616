"""The SoA review page says where each proposed owner came from, not only the name: the
roster (and why that person), the stated owner of a document the row cites, or a fallback
role when nobody is named. Real drafts: a run taken to its SoA wait through the pages on
the demo's access-control policy, with the real in-process worker."""

from __future__ import annotations

import html
import re
import uuid
from collections import Counter
from typing import Any

from fastapi.testclient import TestClient

from orchestrator.console.owner_proposals import owner_proposal
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.owner_sources import OwnerOrigin, fallback, from_document, read_source
from orchestrator.service.document_outcomes import list_outcomes
from orchestrator.service.evidence_life import set_document_life
from orchestrator.service.producer import get_run
from orchestrator.service.queries import get_artifact, list_artifacts
from orchestrator.service.roster import roster
from tests.console.kit import Browser, text
from tests.console.lifecycle_pages import person, run_at_soa_wait
from workers.analysis.poam import proposed_for

TENANT = "tenant-owner-sources"
PRINCIPAL = "user:owner@sources.example"
ACTOR = Actor(TENANT, PRINCIPAL)
POLICY = "access-control-policy.md"
#: One line per row: each line's owner cell, as the page shows it.
_OWNER_CELL = re.compile(
    r'<span class="vh">Owner: </span>(.*?)</span>\s*(?:<span class="cell|</summary>)', re.S
)


def _soa_rows(run_id: uuid.UUID) -> list[dict[str, Any]]:
    (draft,) = [a for a in list_artifacts(ACTOR, run_id, "soa") if a.version == 1]
    rows = get_artifact(ACTOR, run_id, draft.id).content["requirements"]
    assert isinstance(rows, list)
    return rows


def _owner_cells(owner: Browser, run_url: str) -> list[str]:
    page = owner.get(f"{run_url}/artifacts/soa?version=1&requirements.size=200")
    assert page.status_code == 200, text(page)
    return [
        " ".join(html.unescape(re.sub(r"<[^>]+>", " ", cell)).split())
        for cell in _OWNER_CELL.findall(page.text)
    ]


def test_each_row_says_whom_the_roster_or_a_document_proposes_and_why(
    running: TestClient,
) -> None:
    owner = person(running, TENANT, "read", "signal", principal=PRINCIPAL)

    def roster_and_document_owner(assessment_page: str) -> None:
        for entry in (
            {"name": "Dana Whitfield", "email": "dana@example.org", "title": "CISO"},
            {"name": "Lee Park", "email": "lee.park@example.org", "roles": ["control_owner"]},
        ):
            form = {"roles": ["approver"], **entry}
            added = owner.post(f"{assessment_page}/roster", form, from_page=assessment_page)
            assert added.status_code == 303, text(added)
        assessment = uuid.UUID(assessment_page.rsplit("/", 1)[1])
        (policy,) = [d for d in list_outcomes(ACTOR, assessment) if d.filename == POLICY]
        set_document_life(
            ACTOR,
            assessment,
            policy.document_id,
            owner="lee.park@example.org",
            effective_on=None,
            review_every_days=None,
            expires_on=None,
        )

    run_url, run_id = run_at_soa_wait(owner, TENANT, "Owner sources", roster_and_document_owner)
    rows = _soa_rows(run_id)
    origins = Counter(
        str(getattr(read_source(str(r.get("proposed_owner_source"))), "origin", None)) for r in rows
    )
    print(f"SoA owner proposals by origin: {dict(origins)} of {len(rows)} rows")
    assert set(origins) >= {OwnerOrigin.DOCUMENT, OwnerOrigin.ROSTER}, origins

    cells = _owner_cells(owner, run_url)
    assert len(cells) == len(rows), "one owner cell per row"
    by_document = (
        f"proposed from the document's stated owner: Lee Park (owner of {POLICY}, on the roster)"
    )
    assert cells.count(by_document) == origins[OwnerOrigin.DOCUMENT]
    by_title = (
        "proposed from the roster: Dana Whitfield (their title is CISO, who usually runs SCF GOV)"
    )
    by_role = (
        "proposed from the roster: Lee Park (the assessment's control owner; no one on it owns "
    )
    titled = sum(cell == by_title for cell in cells)
    roled = sum(cell.startswith(by_role) for cell in cells)
    assert titled + roled == origins[OwnerOrigin.ROSTER] and roled > 0, cells
    expected_titled = sum(
        str(r.get("proposed_owner_source", "")).startswith("roster: their title is CISO")
        for r in rows
    )
    assert titled == expected_titled
    assert not any(cell.startswith("proposed: ") for cell in cells), "never the name alone"
    assessment = get_run(ACTOR, run_id).assessment_id
    assert [p.name for p in roster(ACTOR, assessment)] == ["Dana Whitfield", "Lee Park"]


def test_with_nobody_named_the_row_says_it_is_a_fallback(running: TestClient) -> None:
    owner = person(running, TENANT, "read", "signal", principal=PRINCIPAL)
    run_url, run_id = run_at_soa_wait(owner, TENANT, "No roster")
    rows = _soa_rows(run_id)
    cells = _owner_cells(owner, run_url)
    assert len(cells) == len(rows) > 0
    expected = Counter(
        f"fallback: no owner stated; the role {row['proposed_owner']} proposed ({_detail(row)})"
        for row in rows
    )
    assert Counter(cells) == expected
    assert all("the assessment has no roster and no cited document" in c for c in cells)


def test_every_origin_reads_in_words_and_unknown_words_are_kept() -> None:
    outsider = {
        "proposed_owner": "Kim Ode",
        "proposed_owner_source": from_document("vendor (v2).md", on_roster=False),
    }
    assert owner_proposal(outsider) == (
        "proposed from the document's stated owner: Kim Ode "
        "(owner of vendor (v2).md, not on the roster)"
    )
    finding = proposed_for({"scf_controls": ["IRO-04"]})  # drafted before proposals named people
    assert owner_proposal(finding) == (
        "fallback: no owner stated; the role Incident Response Lead proposed "
        "(the finding names no person)"
    )
    assert finding["proposed_owner_source"] == fallback("the finding names no person")
    legacy = {"proposed_owner": "CISO", "proposed_owner_source": "set by hand"}
    assert owner_proposal(legacy) == "proposed: CISO (set by hand)"


def _detail(row: dict[str, Any]) -> str:
    source = read_source(str(row["proposed_owner_source"]))
    assert source is not None and source.origin is OwnerOrigin.FALLBACK, row
    return source.detail
