"""What an ISO/IEC 27001:2022 Statement of Applicability rests on (6.1.3 d), measured
through the product's own path in one process, on the demo's sample policies and on the
53 policies of the shared ISO/IEC 27001 corpus:

1. ingest to the gap analysis; every open finding proposes the risk it leaves;
2. a person (scripted here) accepts every proposal as proposed, naming an owner;
3. the SoA gate's readiness then names the rows the register's treatment does not select;
   the person states a legal or contractual requirement on each (by amendment);
4. the SoA is drafted again: every applicable row cites a treated risk or a stated
   requirement, and an SoA gate with `require_basis` would approve it.

Prints, per corpus: applicable rows, risks proposed and accepted, rows with a basis from
the register after step 2, rows stated by a person in step 3, and the redrafted SoA's rows
by basis kind (no basis must be 0).

    python -m bench.soa_basis [--data ../shared/data] [--only demo|iso]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from bench.record import add_record_flag, record_if_asked
from orchestrator.contracts.identity import Actor
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.demo.run import SAMPLES
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)
from orchestrator.service.amendments import amended_content
from orchestrator.service.readiness import artifact_readiness
from orchestrator.service.risk_proposals import Selection, accept_proposal, risk_proposals
from tests.support.services import TENANT, Kit, kit_database_for_this_process, open_kit

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
FRAMEWORK = "ISO/IEC 27001:2022"
LEAD = Actor(tenant_id=TENANT, actor_id="user:lead@acme")
OWNER = "user:risk-owner@acme"
STATED = "Stated by the bench: a contractual requirement of the organisation's customers"


def corpora(data: Path) -> dict[str, list[tuple[Path, str]]]:
    iso = sorted((data / "evidence-iso27001" / "policies").glob("*.md"))
    demo = [
        (p, "text/plain" if p.suffix == ".txt" else "text/markdown")
        for p in sorted(SAMPLES.iterdir())
        if p.suffix in (".md", ".txt")
    ]
    return {"demo": demo, "iso": [(p, "text/markdown") for p in iso]}


def _no_basis(kit: Kit) -> list[str]:
    soa = kit.latest(K.SOA)
    assert soa is not None
    kit.session.commit()  # the kit's reads let go of SQLite's lock
    return list(artifact_readiness(LEAD, kit.run.id, soa.id).to_json()["no_basis_rows"])


def _state_requirement(kit: Kit, rows: list[str]) -> None:
    latest = kit.latest(K.SOA)
    assert latest is not None
    changed = amended_content(
        latest.content,
        K.SOA.value,
        [{"rows": rows, "changes": {"legal_basis": STATED}}],
        actor_id=LEAD.actor_id,
        reason="requirements stated",
        based_on=latest.version,
    )
    kit.add_artifact(K.SOA, changed)
    kit.session.commit()


def measure(files: list[tuple[Path, str]], monkeypatch: Any) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as work, open_kit(Path(work)) as kit:
        kit.framework = FRAMEWORK
        for path, media_type in files:
            kit.add_document(path.name, path.read_bytes(), media_type=media_type)
        kit.run_through(Step.CREATE_GAP_ANALYSIS)
        applicable = [
            r for r in kit.content(K.SOA)["requirements"] if r.get("applicable") is not False
        ]
        with kit_database_for_this_process(kit, monkeypatch):
            proposals = risk_proposals(LEAD, kit.assessment.id)
            kit.session.commit()
            before = _no_basis(kit)
            for proposal in proposals:
                accept_proposal(LEAD, proposal.proposal_id, Selection(owner=OWNER))
            after_register = _no_basis(kit)
            if after_register:
                _state_requirement(kit, after_register)
            left = _no_basis(kit)
            kit.run_step(Step.CREATE_SOA_DRAFT)
            kit.session.commit()
            redrafted = [
                r for r in kit.content(K.SOA)["requirements"] if r.get("applicable") is not False
            ]
        kinds = Counter(str((r.get("basis") or {}).get("kind") or "none") for r in redrafted)
        return {
            "applicable rows": len(applicable),
            "risks proposed (all accepted)": len(proposals),
            "no basis before": len(before),
            "with a basis from the register": len(before) - len(after_register),
            "stated by a person": len(after_register),
            "no basis at the gate": len(left),
            **{f"redrafted: {kind}": count for kind, count in sorted(kinds.items())},
        }


def main() -> None:
    import pytest

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", choices=("demo", "iso"))
    add_record_flag(parser)
    args = parser.parse_args()
    figures: list[tuple[str, float, str]] = []
    for name, files in corpora(args.data.resolve()).items():
        if args.only and name != args.only:
            continue
        if not files:
            print(f"{name}: skipped (documents absent under {args.data})")
            continue
        started = time.perf_counter()
        with pytest.MonkeyPatch.context() as patch:
            measured = measure(files, patch)
        took = time.perf_counter() - started
        print(f"{name} ({FRAMEWORK}, {len(files)} documents, {took:.0f} s)")
        for key, value in measured.items():
            print(f"  {key:34} {value}")
        figures += [
            (f"{key}, {name}", float(measured[key]), "")
            for key in (
                "with a basis from the register",
                "stated by a person",
                "no basis at the gate",
                "applicable rows",
                "risks proposed (all accepted)",
            )
        ]
    record_if_asked(args, "soa_basis", figures)


if __name__ == "__main__":
    main()
