"""A big draft read page by page: filters (the bulk amendments' vocabulary), natural sort,
paging, links that keep the other tables' state; the diff of every field with who amended
and what was said; citations and objects in words; pictures with their numbers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from orchestrator.console import charts
from orchestrator.console.draft_diff import diff
from orchestrator.console.draft_pages import NONE, read_query, table_page
from orchestrator.console.draft_tables import spec_of
from orchestrator.console.values import citation, words
from orchestrator.console.web import TEMPLATES
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.service.review_comments import CommentView

SOA = ArtifactKind.SOA


def _soa(rows: int = 120) -> dict[str, Any]:
    return {
        "requirements": [
            {
                "framework": "A" if n % 2 else "B",
                "requirement_id": f"R{n}",
                "title": f"Requirement number {n}",
                "implementation_status": None if n % 3 else "implemented",
                "owner": "CISO" if n % 4 == 0 else None,
                "applicable": True,
                "scf_controls": ["IAC-01"] if n % 5 else ["BCD-02"],
                "proposal": "weak_evidence",
            }
            for n in range(1, rows + 1)
        ]
    }


def _page(content: dict[str, Any], **params: str) -> Any:
    spec = spec_of(SOA, "requirements")
    assert spec is not None
    query = read_query(spec, {f"requirements.{k}": v for k, v in params.items()})
    return table_page(SOA, spec, content, query)


def _names(page: Any) -> list[str]:
    return [row.name for row in page.rows]


def test_a_page_of_a_long_table() -> None:
    page = _page(_soa(), page="3", size="25")
    assert (page.first, page.last, page.matched, page.pages) == (51, 75, 120, 5)
    assert _names(page) == [f"R{n}" for n in range(51, 76)]
    beyond = _page(_soa(), page="99", size="25")
    assert beyond.query.page == 5 and _names(beyond)[-1] == "R120", "past the end: the last"
    assert _page(_soa(), size="7").query.size == 50, "only the sizes offered"


def test_filters_select_what_a_bulk_amendment_would() -> None:
    content = _soa()
    rows = content["requirements"]
    page = _page(content, status=NONE, framework="A", size="200")
    expected = [
        r["requirement_id"]
        for r in rows
        if r["framework"] == "A" and r["implementation_status"] is None
    ]
    assert _names(page) == expected and page.filter == {
        "implementation_status": None,
        "framework": "A",
    }
    undecided = _page(content, undecided="1", size="200")
    assert set(_names(undecided)) == {
        r["requirement_id"] for r in rows if r["implementation_status"] is None
    }
    assert _names(_page(content, q="R11", size="200")) == [
        "R11",
        *[f"R{n}" for n in range(110, 120)],
    ]
    assert _names(_page(content, domain="BCD", size="200")) == [f"R{n}" for n in range(5, 121, 5)]
    facets = {f.param: [v for v, _ in f.options] for f in _page(content).facets}
    assert facets["domain"] == ["BCD", "IAC"] and facets["owner"] == ["CISO", NONE]
    assert "proposal" not in facets, "one value only: nothing to choose between"


def test_sorting_is_natural_and_keeps_blanks_last() -> None:
    content = _soa()
    down = _page(content, sort="requirement_id", order="desc")
    assert _names(down)[:3] == ["R120", "R119", "R118"]
    by_owner = _page(content, sort="owner", size="200")
    owners = [row.row["owner"] for row in by_owner.rows]
    assert owners[:30] == ["CISO"] * 30 and set(owners[30:]) == {None}
    by_owner_down = _page(content, sort="owner", order="desc", size="200")
    assert by_owner_down.rows[-1].row["owner"] is None, "blanks last either way"


def test_links_keep_the_other_tables_as_they_were() -> None:
    page = _page(_soa(), q="R1", page="2")
    link = page.link({"version": "3", "controls.page": "4", "requirements.q": "old"}, page=3)
    assert "version=3" in link and "controls.page=4" in link
    assert "requirements.page=3" in link and "requirements.q=R1" in link


def _gap(owner: str | None, target: str | None) -> dict[str, Any]:
    return {
        "gaps": [
            {
                "control_id": "SOC 2 CC1.1",
                "framework": "SOC 2",
                "requirement_id": "CC1.1",
                "severity": "high",
                "owner": owner,
                "target_date": target,
            }
        ]
    }


def test_the_diff_shows_every_amended_field_who_and_why_and_what_was_said() -> None:
    after = _gap("Head of Security", "2027-03-02") | {
        "amendments": [
            {
                "version": 2,
                "by": "user:owner@x",
                "at": "2027-01-01T10:00:00+00:00",
                "reason": "assign an owner and a target date",
                "rows": [{"row": "SOC 2 CC1.1"}],
            }
        ]
    }
    said = CommentView(
        7,
        ArtifactKind.GAP_ANALYSIS,
        1,
        "SOC 2 CC1.1",
        "user:bo@x",
        "who owns it?",
        datetime.now(UTC),
    )
    changes = diff(ArtifactKind.GAP_ANALYSIS, _gap(None, None), after, version=2, comments=[said])
    [gaps, met] = changes.tables
    [row] = gaps.changes
    assert row.fields == [
        ("Owner", None, "Head of Security"),
        ("Target date", None, "2027-03-02"),
    ]
    assert [(a.by, a.reason) for a in row.amended] == [
        ("user:owner@x", "assign an owner and a target date")
    ]
    assert row.comments == [said] and changes.comments == []
    assert met.changes == []


def test_citations_and_objects_read_as_words_never_json() -> None:
    cited = citation(
        {
            "document": "access.md",
            "heading_path": "Access Control Policy > Reviews",
            "pages": [3, 4],
            "excerpt": " Access is reviewed quarterly. ",
            "verdict": "specifically about IAC-17",
            "chunk_id": "c1",
            "similarity": 0.5771,
        }
    )
    assert cited.label == "access.md § Access Control Policy › Reviews, pp. 3–4"
    assert (cited.excerpt, cited.verdict) == (
        "Access is reviewed quarterly.",
        "specifically about IAC-17",
    )
    assert citation({"document": "a.pdf", "page_start": 2, "excerpt": "x"}).label == "a.pdf, p. 2"
    assert words({"owner": None, "ids": ["A", "B"], "ok": True}) == "owner: –; ids: A, B; ok: yes"
    shown = TEMPLATES.from_string('{% from "macros.html" import value %}{{ value(v) }}').render(
        v=[{"chunk_id": "c1", "similarity": 0.5771, "document": "d.md", "excerpt": "e"}]
    )
    assert "<cite>d.md</cite>" in shown and "similarity" not in shown and "{" not in shown


def test_pictures_carry_their_numbers() -> None:
    [maturity] = charts.charts(
        ArtifactKind.MATURITY_ASSESSMENT,
        {
            "domains": [
                {
                    "domain": "IAC",
                    "name": "Identification & Authentication",
                    "level": 2,
                    "target": 3,
                },
                {"domain": "BCD", "name": "Business Continuity <&>", "level": 0, "target": 3},
            ]
        },
    )
    assert "2 / 3" in maturity.svg and "0 / 3" in maturity.svg
    assert "&lt;&amp;&gt;" in maturity.svg, "labels are escaped"
    assert maturity.rows == [
        ("IAC Identification & Authentication", "2", "3"),
        ("BCD Business Continuity <&>", "0", "3"),
    ]
    severity, due = charts.charts(
        ArtifactKind.POAM,
        {
            "items": [
                {"severity": "high", "scheduled_completion_date": "2027-01-31"},
                {"severity": "medium", "scheduled_completion_date": "2027-01-02"},
                {"severity": "high", "scheduled_completion_date": "2027-03-02"},
            ]
        },
    )
    assert severity.rows == [("high", 2), ("medium", 1)]
    assert due.headings == ("Due", "high", "medium", "Items")
    assert due.rows == [("2027-01", 1, 1, 2), ("2027-03", 1, 0, 1)]
