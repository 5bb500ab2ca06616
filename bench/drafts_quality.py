"""Drafts an assessor would sign, measured on the demo's sample policies and on the shared
comply policy set (SOC 2 with every category and the FedRAMP AC-2 form; ISO/IEC
27001:2022), through the product's own path in one process (ingest to report, a reviewer
naming an owner on the first POA&M item before the report).

Per run it prints: findings and requirements in scope, the most findings of one
requirement (must be 1), the share of distinct causes (>= 0.9), of recommendations free of
product names and URLs (1.0), of POA&M items with NIST ids or a reason (1.0), of distinct
milestone plans (>= 0.8), of items whose resources are estimated or flagged undecided
(1.0), whether the report's counts equal the drafts' and whether the JSON and CSV points of
contact agree (1 each).

    python -m bench.drafts_quality [--data ../shared/data] [--only demo|soc2|iso]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.record import add_record_flag, record_if_asked
from orchestrator.contracts.signals import ArtifactKind as K
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)
from orchestrator.service.amendments import amended_content
from tests.support import draft_quality as quality
from tests.support.services import open_kit

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
SAMPLES = Path(__file__).resolve().parents[1] / "orchestrator" / "demo" / "samples"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
ALL_SOC2 = ["availability", "processing integrity", "confidentiality", "privacy"]


def runs(data: Path) -> dict[str, tuple[str, list[str] | None, list[tuple[Path, str]]]]:
    comply = data / "policies" / "markdown" / "comply"
    policies = [(p, "text/markdown") for p in sorted(comply.glob("*.md"))]
    form = data / "policies" / "docx" / "FedRAMP_ac-2_v2.1.docx"
    samples = [
        (p, "text/plain" if p.suffix == ".txt" else "text/markdown")
        for p in sorted(SAMPLES.iterdir())
        if p.suffix in (".md", ".txt")
    ]
    return {
        "demo": ("SOC 2", ["availability", "confidentiality"], samples),
        "soc2": ("SOC 2", ALL_SOC2, [*policies, (form, DOCX)]),
        "iso": ("ISO/IEC 27001:2022", None, policies),
    }


def measure(
    framework: str, categories: list[str] | None, files: list[tuple[Path, str]]
) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as work, open_kit(Path(work)) as kit:
        kit.framework, kit.categories = framework, categories
        for path, media_type in files:
            kit.add_document(path.name, path.read_bytes(), media_type=media_type)
        kit.run_through(Step.CREATE_POAM)
        poam = kit.latest(K.POAM)
        assert poam is not None
        if poam.content["items"]:
            first = poam.content["items"][0]["id"]
            changes = [{"row": first, "changes": {"owner": "A. Person"}}]
            kit.add_artifact(
                K.POAM,
                amended_content(
                    poam.content,
                    K.POAM.value,
                    changes,
                    actor_id="user:bench",
                    reason="owner named",
                    based_on=poam.version,
                ),
            )
            kit.session.commit()
        kit.run_step(Step.CREATE_REPORT)
        evidence, gaps = kit.content(K.EVIDENCE_ANALYSIS), kit.content(K.GAP_ANALYSIS)
        exports = {e["kind"]: Path(e["path"]) for e in kit.content(K.REPORT)["exports"]}
        return {
            **quality.finding_quality(evidence, gaps),
            **quality.poam_quality(kit.content(K.POAM)),
            **quality.report_quality(evidence, gaps, exports),
        }


#: The shares recorded (near 1 is what an assessor wants); every measure is printed.
QUALITY_SHARES = ("distinct_causes", "distinct_milestones", "clean_recommendations")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--only", choices=("demo", "soc2", "iso"))
    add_record_flag(parser)
    args = parser.parse_args()
    figures: list[tuple[str, float, str]] = []
    for name, (framework, categories, files) in runs(args.data.resolve()).items():
        if args.only and name != args.only:
            continue
        if not files or not all(path.is_file() for path, _ in files):
            print(f"{name}: skipped (documents absent under {args.data})")
            continue
        started = time.perf_counter()
        measured = measure(framework, categories, files)
        print(
            f"{name} ({framework}, {len(files)} documents, {time.perf_counter() - started:.0f} s)"
        )
        for key in quality.MEASURES:
            value = measured[key]
            print(f"  {key:32} {value:.3f}" if isinstance(value, float) else f"  {key:32} {value}")
        figures += [(f"{key}, {name}", float(measured[key]), "") for key in QUALITY_SHARES]
    record_if_asked(args, "drafts_quality", figures)


if __name__ == "__main__":
    main()
