"""A draft artifact kind's facts are declared once (orchestrator.contracts.artifact_registry)
and the code that handles it registers itself where it lives (its drafting function, its
console tables, form and chart); everything that lists kinds derives from those: the
approval signals and waits, the rows people amend and decide, the gate's readiness and
default policy, rewind's versioned kinds, the report's inputs, labels and gates, the
analysis queue's dispatch and the console. A kind added in a test (tests/architecture/
fake_kind, four files) shows up in each of them; the shipped declarations agree with the
lifecycle's steps and signals, and every one has its handlers registered."""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from orchestrator.console.amend_fields import FIELDS, changes_of, fields_of
from orchestrator.console.charts import CHARTS, charts
from orchestrator.console.draft_tables import TABLES, TableSpec, spec_of, specs_of, tables
from orchestrator.contracts import artifact_registry
from orchestrator.contracts.artifact_registry import (
    ArtifactDeclaration,
    declared,
    in_report,
    versioned,
)
from orchestrator.contracts.jobs import JobKind
from orchestrator.contracts.registry import RegistrationError, Registry
from orchestrator.contracts.signals import APPROVAL_SIGNALS, ArtifactKind, SignalType
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.contracts.steps import StepKind
from orchestrator.lifecycle import artifact_table
from orchestrator.lifecycle.definition import APPROVAL_WAIT_FOR, APPROVED_ANY_TIME, STEP_SPECS
from orchestrator.lifecycle.policies import GatePolicy, requires_decisions
from orchestrator.service.amendments import AMENDABLE, REPORT_STATEMENT, amended_content
from orchestrator.service.draft_rows import amendable_kinds, rows_of
from orchestrator.service.readiness import readiness, undecided_rows
from orchestrator.service.row_filter import matching_rows
from tests.architecture.fake_kind.facts import VENDOR_REVIEW
from workers.analysis.drafting import DRAFTS, PREPARES
from workers.analysis.service import drafting_of
from workers.reporting.signoff import gate_of

ROOT = Path(__file__).resolve().parents[2]
FAKE_KIND = Path(__file__).parent / "fake_kind"
REGISTRIES: tuple[Registry[object], ...] = (DRAFTS, PREPARES, TABLES, FIELDS, CHARTS)  # type: ignore[assignment]


@pytest.fixture
def declared_fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[ArtifactDeclaration]:
    """The fake kind declared and its modules imported, as the entry points import theirs."""
    monkeypatch.setattr(
        artifact_registry, "ARTIFACTS", (*artifact_registry.ARTIFACTS, VENDOR_REVIEW)
    )
    for name in ("console", "drafting", "registrations"):
        module = f"tests.architecture.fake_kind.{name}"
        if module in sys.modules:
            importlib.reload(sys.modules[module])  # registered again after the last test
        else:
            importlib.import_module(module)
    yield VENDOR_REVIEW
    for registry in REGISTRIES:
        registry.remove(VENDOR_REVIEW.kind)


def test_every_kind_is_declared_once_and_agrees_with_the_lifecycle() -> None:
    assert [d.kind for d in declared()] == [kind.value for kind in ArtifactKind]
    for declaration in declared():
        kind = ArtifactKind(declaration.kind)
        drafting = STEP_SPECS[Step(declaration.drafted_at)]
        assert drafting.produces is kind, declaration
        # The analysis queue drafts what its jobs produce; the report has its own queue.
        assert (declaration.kind in DRAFTS) == (drafting.job_kind is JobKind.ANALYSIS)
        if declaration.approved_by is not None:
            assert APPROVAL_SIGNALS[SignalType(declaration.approved_by)] is kind
        if declaration.approved_at is not None:
            assert declaration.approved_by is not None, declaration
            wait = STEP_SPECS[Step(declaration.approved_at)]
            assert wait.kind is StepKind.WAIT_FOR_APPROVAL
            assert wait.awaits is SignalType(declaration.approved_by)
            assert APPROVAL_WAIT_FOR[kind] is wait.step
        assert declaration.decided is None or declaration.rows is not None, declaration
        assert declaration.label, declaration
        assert declaration.approved_any_time == (kind in APPROVED_ANY_TIME)
        if declaration.reviewed_with is not None:
            assert declaration.approved_by is None and declaration.report is not None
            assert artifact_registry.declaration(declaration.reviewed_with), declaration


def test_every_approval_wait_approves_a_declared_kind() -> None:
    waits = [spec for spec in STEP_SPECS.values() if spec.kind is StepKind.WAIT_FOR_APPROVAL]
    assert {spec.step for spec in waits} == set(APPROVAL_WAIT_FOR.values())
    assert {spec.awaits for spec in waits} <= set(APPROVAL_SIGNALS)


def test_every_declared_console_table_and_field_fits_its_rows() -> None:
    for declaration in declared():
        specs = specs_of(declaration.kind)
        assert specs and all(isinstance(spec, TableSpec) for spec in specs), declaration
        decided = [spec for spec in specs if spec.decided]
        if declaration.rows is None:
            assert not decided and not fields_of(declaration.kind), declaration
            continue
        # The table people decide in names rows as amendments do.
        [table] = decided
        assert table.key == declaration.rows.key, declaration
        allowed = REPORT_STATEMENT if declaration.kind == "report" else AMENDABLE
        assert {field.name for field in fields_of(declaration.kind)} <= allowed, declaration


def test_every_declared_kind_has_its_handlers_registered() -> None:
    """One completeness check per registry: a declared kind whose handler nothing
    registered (or whose module the entry points do not import) fails here."""
    for d in declared():
        analysis = STEP_SPECS[Step(d.drafted_at)].job_kind is JobKind.ANALYSIS
        assert (d.kind in DRAFTS) == analysis, f"{d.kind}: no @drafts function registered"
        assert d.kind in TABLES, f"{d.kind}: no console tables registered"
        assert (d.kind in FIELDS) == (d.rows is not None), f"{d.kind}: amendment form"
    names = {d.kind for d in declared()}
    for registry in REGISTRIES:
        assert set(registry) <= names, registry.what


ENTRY_POINTS = {
    "celery worker": "from orchestrator.engine.celery_app import create_app\n"
    "from orchestrator.config.settings import Settings\n"
    "create_app(Settings(broker_url='memory://localhost/')).loader.import_default_modules()",
    "api and console": "import orchestrator.api.app",
}
CHECK = """
from orchestrator.console.amend_fields import FIELDS
from orchestrator.console.charts import CHARTS
from orchestrator.console.draft_tables import TABLES
from workers.analysis.drafting import DRAFTS, PREPARES
print(sorted(DRAFTS), sorted(PREPARES), sorted(TABLES), sorted(FIELDS), sorted(CHARTS))
"""


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_each_entry_point_registers_every_handler(entry: str) -> None:
    """A fresh process started the way the fleet starts one registers what this one has."""
    here = [sorted(registry) for registry in REGISTRIES]
    done = subprocess.run(
        [sys.executable, "-c", ENTRY_POINTS[entry] + CHECK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == " ".join(str(names) for names in here)


def test_a_registration_is_refused_twice_and_for_an_undeclared_kind() -> None:
    with pytest.raises(RegistrationError, match="registered twice"):
        TABLES.add("soa", ())
    with pytest.raises(RegistrationError, match="nothing declares"):
        DRAFTS.add("vendor_review", lambda context: {})
    with pytest.raises(RegistrationError, match="no draft function is registered for 'report'"):
        DRAFTS["report"]


def test_a_new_artifact_kind_is_four_files(declared_fake: ArtifactDeclaration) -> None:
    """The fake kind's four files are the only ones that name it: no product list had to
    learn it (rewind, the report package, the console, the analysis queue)."""
    files = sorted(p.relative_to(FAKE_KIND).as_posix() for p in FAKE_KIND.glob("*.py"))
    naming = sorted(
        p.relative_to(FAKE_KIND).as_posix()
        for p in FAKE_KIND.glob("*.py")
        if declared_fake.kind in p.read_text()
    )
    assert files == ["__init__.py", "console.py", "drafting.py", "facts.py", "registrations.py"]
    assert naming == ["__init__.py", "console.py", "drafting.py", "facts.py"]
    # registrations.py names the modules, not the kind; __init__.py is this explanation.
    code = [f for f in files if f != "__init__.py"]
    assert len(code) == 4
    product = [
        p
        for top in ("orchestrator", "workers")
        for p in (ROOT / top).rglob("*.py")
        if declared_fake.kind in p.read_text()
    ]
    assert product == []


def test_a_new_artifact_kind_is_picked_up_everywhere(
    declared_fake: ArtifactDeclaration,
) -> None:
    from tests.architecture.fake_kind.drafting import draft_vendors

    kind = declared_fake.kind
    content = draft_vendors(None)

    # The analysis queue finds its drafting function.
    assert drafting_of("create_vendor_review") == (kind, draft_vendors, None)

    # Rewind never drafts it again without the flag; the report is built from it, with
    # its label and its gate in the sign-off.
    assert kind in versioned()
    assert in_report()[-1] is declared_fake and declared_fake.label == "Vendor review"
    assert gate_of(declared_fake) == {"gated": True}

    # Its rows: named, filtered, amended, and what is undecided before its gate.
    assert rows_of(kind) == ("vendors", "vendor_id") and kind in amendable_kinds()
    assert undecided_rows(kind, content) == ["V-1"]
    assert [r["vendor_id"] for r in matching_rows(kind, content, {"undecided": True})] == ["V-1"]
    ready = readiness(kind, 1, content, GatePolicy())
    assert requires_decisions(GatePolicy(), kind) and not ready.ready
    assert ready.refusal() is not None and "1 of 3 vendors without an owner: V-1" in (
        ready.refusal() or ""
    )
    amended = amended_content(
        content,
        kind,
        [{"row": "V-1", "changes": {"owner": "buyer@example.org"}}],
        actor_id="reviewer",
        reason="owner named",
        based_on=1,
    )
    assert undecided_rows(kind, amended) == []
    assert readiness(kind, 2, amended, GatePolicy()).ready

    # The console: its table with rows named as amendments name them, its form, its chart.
    [table] = tables(kind, content)
    assert table.spec is spec_of(kind, "vendors")
    assert [row.name for row in table.rows] == ["V-1", "V-2", "V-3"]
    assert changes_of(kind, {"owner": " buyer@example.org ", "other": "x"}) == {
        "owner": "buyer@example.org"
    }
    [drawn] = charts(kind, content)
    assert drawn.rows == [(1,)]

    # The lifecycle page's table of drafts.
    assert (
        "| `vendor_review` | `create_vendor_review` | `vendor_review_approved` | "
        "`wait_for_vendor_review_approval` | `vendors` by `vendor_id` | "
        "`owner` set (required by default) |"
    ) in artifact_table.render()


def test_the_lifecycle_page_is_what_the_declarations_write() -> None:
    page = artifact_table.PAGE.read_text()
    assert artifact_table.written(page) == page, (
        "docs/lifecycle.md is stale: python -m orchestrator.lifecycle.artifact_table --write"
    )
    assert all(f"| `{d.kind}` |" in page for d in declared())


def test_the_report_and_rewind_read_the_shipped_facts() -> None:
    assert [d.kind for d in in_report()] == [
        "scope",
        "soa",
        "evidence_analysis",
        "gap_analysis",
        "maturity_assessment",
        "poam",
    ]
    assert versioned() == {"scope", "soa", "gap_analysis", "maturity_assessment", "poam", "report"}
    evidence = artifact_registry.declaration("evidence_analysis")
    assert evidence is not None and gate_of(evidence) == {
        "gated": False,
        "note": "no gate of its own: reviewed with the gap analysis",
    }
    assert {ArtifactKind.SCOPE} == APPROVED_ANY_TIME


def test_an_undeclared_kind_has_nothing() -> None:
    assert rows_of("vendor_review") is None and "vendor_review" not in amendable_kinds()
    assert "vendor_review" not in versioned() and VENDOR_REVIEW not in in_report()
    assert specs_of("vendor_review") == () and fields_of("vendor_review") == ()
    assert charts("vendor_review", {"vendors": []}) == []
    assert not requires_decisions(GatePolicy(), "vendor_review")
