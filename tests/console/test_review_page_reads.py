"""A review page reads in one read transaction (the sign-in check, the draft, the previous
version for the diff, comments, claims, the header's count), and shows an amended draft
as the amendments wrote it: the rows changed, who changed them and why, the same on every
request of the same version."""

from __future__ import annotations

import html
import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine, event
from sqlalchemy import text as sql_text

from orchestrator.api import app
from orchestrator.console.draft_pages import read_query, table_page
from orchestrator.console.draft_tables import spec_of
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.db.models import Artifact
from orchestrator.db.session import one_read, read_transaction, transaction
from orchestrator.service.amendments import amended_content
from tests.console.kit import Browser, key, text
from tests.support.embedded import api_on_postgres
from tests.support.services import add_assessment_and_run

TENANT = "acme"
SOA = ArtifactKind.SOA
AMENDER = "user:amender@acme"


def _soa(rows: int = 120) -> dict[str, Any]:
    return {
        "requirements": [
            {
                "framework": "A" if n % 2 else "B",
                "requirement_id": f"R{n}" if n % 10 else f"S{n // 10}",
                "title": f"Requirement number {n}",
                "implementation_status": None if n % 3 else "implemented",
                "owner": None,
                "applicable": True,
                "scf_controls": ["IAC-01"] if n % 5 else ["BCD-02"],
                "proposal": "weak_evidence",
            }
            for n in range(1, rows + 1)
        ]
        # Two frameworks share S1 ... S12's keys: those rows are named "<framework> S<n>".
        + [
            {"framework": "A", "requirement_id": f"S{n}", "title": f"Shared {n}", "owner": None}
            for n in range(1, 13)
        ],
        "summary": {"requirements": rows + 12},
    }


def _versions() -> list[dict[str, Any]]:
    """Version 1, then two amendments: one row's owner; the named rows of a shared key and a
    filter (every row of framework B without a status)."""
    first = _soa()
    second = amended_content(
        first,
        SOA,
        [{"row": "R1", "changes": {"owner": "CISO"}}],
        actor_id=AMENDER,
        reason="the CISO owns it",
        based_on=1,
    )
    third = amended_content(
        second,
        SOA,
        [
            {"rows": ["A S3", "B S3"], "changes": {"owner": "IT"}},
            {"filter": {"framework": "B", "implementation_status": None}, "changes": {"note": "b"}},
        ],
        actor_id=AMENDER,
        reason="shared rows to IT",
        based_on=2,
    )
    return [first, second, third]


@pytest.fixture
def amended(client: TestClient) -> tuple[Browser, uuid.UUID]:
    return _amended_run(client)


def _amended_run(client: TestClient) -> tuple[Browser, uuid.UUID]:
    """A run waiting at its SoA gate, the SoA in three versions (two amendments), and a
    reviewer signed in."""
    now = utcnow()
    with transaction() as session:
        assessment, run = add_assessment_and_run(
            session,
            "Amended",
            tenant_id=TENANT,
            organization_id="acme-org",
            actor_id=AMENDER,
            status="waiting_for_approval",
            current_step="wait_for_soa_approval",
            context={"artifacts": {"soa": 3}, "framework": "SCF"},
            trace_id="trace-1",
        )
        session.flush()
        for version, content in enumerate(_versions(), start=1):
            session.add(
                Artifact(
                    tenant_id=TENANT,
                    assessment_id=assessment.id,
                    run_id=run.id,
                    kind=SOA.value,
                    version=version,
                    status="draft",
                    content=content,
                    sha256=f"{version}" * 64,
                    created_by_job_id="test" if version == 1 else "amendment:test",
                    created_at=now,
                )
            )
        run_id = run.id
    browser = Browser(client)
    assert browser.sign_in(key("admin", tenant=TENANT)).status_code == 303
    return browser, run_id


class Transactions:
    def __init__(self) -> None:
        self.begun = 0

    def __call__(self, *_: Any) -> None:
        self.begun += 1

    @classmethod
    @contextmanager
    def counting(cls) -> Iterator[Transactions]:
        counted = cls()
        event.listen(Engine, "begin", counted)
        try:
            yield counted
        finally:
            event.remove(Engine, "begin", counted)


@pytest.fixture
def transactions() -> Iterator[Transactions]:
    with Transactions.counting() as counted:
        yield counted


@pytest.mark.parametrize(
    "query",
    [
        "",
        "?version=1",
        "?version=2",
        "?requirements.size=200&requirements.sort=owner&requirements.order=desc",
        "?requirements.framework=B&requirements.undecided=1&changes=all",
        "?requirements.q=shared&evidence.page=2",
    ],
)
def test_a_review_page_reads_in_one_transaction(
    amended: tuple[Browser, uuid.UUID], transactions: Transactions, query: str
) -> None:
    browser, run_id = amended
    transactions.begun = 0
    page = browser.get(f"/console/runs/{run_id}/artifacts/soa{query}")
    assert page.status_code == 200, page.text[:500]
    assert transactions.begun == 1


def test_on_postgresql_too_one_read_only_transaction(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The page's one transaction is PostgreSQL's READ ONLY one; the page is the same."""
    with api_on_postgres(monkeypatch, tmp_path, postgres_url):
        browser, run_id = _amended_run(TestClient(app))
        seen: list[str] = []

        def statement(_c: Any, _cur: Any, statement: str, *_: Any) -> None:
            seen.append(statement)

        event.listen(Engine, "before_cursor_execute", statement)
        try:
            with Transactions.counting() as counted:
                page = browser.get(f"/console/runs/{run_id}/artifacts/soa?version=3")
        finally:
            event.remove(Engine, "before_cursor_execute", statement)
        assert page.status_code == 200, page.text[:500]
        assert counted.begun == 1
        assert "shared rows to IT" in text(page)
        assert not [s for s in seen if s.lstrip().upper().startswith(("INSERT", "UPDATE"))]
        with one_read(), read_transaction() as session:
            assert session.scalar(sql_text("SHOW transaction_read_only")) == "on"


def test_a_rows_page_reads_in_one_transaction(
    amended: tuple[Browser, uuid.UUID], transactions: Transactions
) -> None:
    browser, run_id = amended
    transactions.begun = 0
    page = browser.get(f"/console/runs/{run_id}/artifacts/soa/row?name=R1")
    assert page.status_code == 200, page.text[:500]
    assert transactions.begun == 1
    assert "the CISO owns it" in text(page)


def test_a_missing_version_still_answers_its_page(
    amended: tuple[Browser, uuid.UUID], transactions: Transactions
) -> None:
    browser, run_id = amended
    page = browser.get(f"/console/runs/{run_id}/artifacts/soa?version=9")
    assert page.status_code == 404 and "version 9" in text(page)


def _stable(html: str) -> str:
    """The page less what differs on every request (the form keys)."""
    return re.sub(r'name="(key|idempotency_key|csrf_token)" value="[^"]*"', "", html)


def test_an_amended_version_shows_what_the_amendments_wrote(
    amended: tuple[Browser, uuid.UUID],
) -> None:
    browser, run_id = amended
    url = f"/console/runs/{run_id}/artifacts/soa?version=3&requirements.size=200"
    page = browser.get(url)
    shown = text(page)
    # The diff from version 2: the amendment's reason and author, each changed row.
    assert "shared rows to IT" in shown and AMENDER in shown
    assert "A S3" in shown and "B S3" in shown
    # The table: the amended values, on the rows the amendments named.
    expected = _versions()[2]["requirements"]
    owners = {r["requirement_id"]: r.get("owner") for r in expected if r["framework"] == "B"}
    assert owners["S3"] == "IT" and "IT" in shown and "CISO" in shown
    # The same version read again answers the same page.
    for _ in range(2):
        assert _stable(browser.get(url).text) == _stable(page.text)
    # And an earlier version is still as it was: no owner set on R1 in version 1.
    first = browser.get(f"/console/runs/{run_id}/artifacts/soa?version=1&requirements.q=R1")
    assert "CISO" not in text(first)


def test_the_page_of_a_version_is_the_page_of_its_content(
    amended: tuple[Browser, uuid.UUID],
) -> None:
    """Each version's table lists the rows that paging its stored content lists, in order."""
    browser, run_id = amended
    spec = spec_of(SOA, "requirements")
    assert spec is not None
    for version, content in enumerate(_versions(), start=1):
        for query in (
            {"requirements.size": "200", "requirements.sort": "owner"},
            {"requirements.page": "2", "requirements.undecided": "1"},
            {"requirements.framework": "B", "requirements.q": "S"},
        ):
            page = browser.get(
                f"/console/runs/{run_id}/artifacts/soa?version={version}&{urlencode(query)}"
            )
            table = table_page(SOA, spec, content, read_query(spec, query))
            names = [row.name for row in table.rows]
            assert names, (version, query)
            found = [html.unescape(n) for n in re.findall(r"Open (.+?) on its own page", page.text)]
            assert found[: len(names)] == names, (version, query)


def test_statuses_confirmed_in_bulk_read_apart_from_those_decided_alone(
    amended: tuple[Browser, uuid.UUID],
) -> None:
    """A fourth version: R2's status decided alone, then one filter confirming every row of
    framework A without a status; the page says who, when and how many in that action."""
    browser, run_id = amended
    third = _versions()[2]
    alone = amended_content(
        third,
        SOA,
        [{"row": "R2", "changes": {"implementation_status": "not_implemented"}}],
        actor_id="user:assessor@acme",
        reason="seen on site",
        based_on=3,
    )
    bulk = amended_content(
        alone,
        SOA,
        [
            {
                "filter": {"framework": "A", "implementation_status": None},
                "changes": {"implementation_status": "implemented"},
            }
        ],
        actor_id=AMENDER,
        reason="proposals confirmed",
        based_on=4,
    )
    [selection] = bulk["amendments"][-1]["selections"]
    with transaction() as session:
        first = session.query(Artifact).filter_by(run_id=run_id, version=1).one()
        for version, content in ((4, alone), (5, bulk)):
            session.add(
                Artifact(
                    tenant_id=TENANT,
                    assessment_id=first.assessment_id,
                    run_id=run_id,
                    kind=SOA.value,
                    version=version,
                    status="draft",
                    content=content,
                    sha256=f"{version}" * 64,
                    created_by_job_id="amendment:test",
                    created_at=utcnow(),
                )
            )
    page = browser.get(
        f"/console/runs/{run_id}/artifacts/soa?version=5&requirements.q=R2&requirements.size=200"
    )
    shown = text(page)
    picked = selection["selected"]
    assert "How the statuses were decided" in shown
    assert f"{picked + 1} rows, 1 one by one and {picked} in bulk" in shown
    assert f"{AMENDER}, {bulk['amendments'][-1]['at']}: {picked} rows in one action" in shown
    assert "one by one by user:assessor@acme" in shown  # R2 own line
    row = browser.get(f"/console/runs/{run_id}/artifacts/soa/row?name=R1&version=5")
    assert f"in bulk by {AMENDER}" in text(row) and f"set {picked} rows" in text(row)
