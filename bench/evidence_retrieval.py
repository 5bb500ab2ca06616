"""Evidence an assessor can trust, measured on the labelled procedures (SOC 2 labels).

1. Recall: upload the 141 procedures, select SOC 2, draft through the evidence analysis;
   macro recall@5 and @10 of each labelled criterion's procedures among the first k
   distinct documents of the artifact's own evidence list, beside lexical-only and
   dense-only rankings of the same run.
2. Calibration: upload a fixed half of the procedures (by a hash of the name); a labelled
   criterion none of whose procedures was uploaded is "uncovered". The share of uncovered
   criteria proposed `evidence_found` and of covered ones proposed `no_evidence_found`,
   beside the best single score threshold of each retriever on the same run. The other
   half is run too, as a check that the method was not fitted to one split.
3. Time and peak memory of ingest -> index -> pre-analysis -> scope -> SoA -> evidence.

    python -m bench.evidence_retrieval [--data ../shared/data/evidence] [--skip-timing]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from orchestrator.catalog.matching import linked_requirements, resolve
from orchestrator.catalog.registry import shipped_catalog
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.knowledge.embedder import default_embedder
from orchestrator.knowledge.hybrid import EvidenceIndex, Method, documents_in_order
from tests.support.services import Kit, open_kit
from workers.analysis.requirement_query import (
    CatalogVectors,
    forget_cached_vectors,
    requirement_facets,
)

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "evidence"
KS = (5, 10)
DRAFTING = (
    Step.INGEST_DOCUMENTS,
    Step.INDEX_KB,
    Step.RUN_SCF_PRE_ANALYSIS,
    Step.CREATE_SCOPE,
    Step.CREATE_SOA_DRAFT,
    Step.RUN_EVIDENCE_ANALYSIS,
)


def in_half(name: str, half: int) -> bool:
    """The fixed split: the first byte of the name's SHA-256, even (0) or odd (1)."""
    return hashlib.sha256(name.encode()).digest()[0] % 2 == half


def draft(kit: Kit, paths: list[Path], framework: str) -> dict[str, float]:
    """Upload and draft through the evidence analysis, timed per step."""
    kit.framework = framework
    timings: dict[str, float] = {}
    started = time.perf_counter()
    for path in paths:
        kit.add_document(path.name, path.read_bytes())
    kit.session.commit()
    for step in DRAFTING:
        begun = time.perf_counter()
        kit.run_step(step)
        produced = kit.results[step].artifact
        if produced is not None:
            kit.approve(produced.kind)
            kit.session.commit()
        timings[step.value] = time.perf_counter() - begun
    timings["total"] = time.perf_counter() - started
    return timings


def artifact_rows(kit: Kit) -> dict[str, dict[str, Any]]:
    content = kit.content(ArtifactKind.EVIDENCE_ANALYSIS)
    return {str(r["requirement_id"]): r for r in content["requirements"]}


def listed_documents(row: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(str(c["document"]) for c in row.get("candidates", [])))


def single_rankings(kit: Kit, criteria: list[str]) -> dict[str, dict[str, list[Any]]]:
    """Per criterion, documents in order and best scores, by lexical and by dense alone."""
    catalog = shipped_catalog()
    embedder = default_embedder()
    index = EvidenceIndex.load(kit.session, kit.assessment.id, embedder)
    vectors = CatalogVectors(catalog, embedder, None)
    choice = resolve([catalog], "SOC 2")
    assert choice is not None
    requirements = {r.id: r for r in linked_requirements(choice, [catalog])}
    out: dict[str, dict[str, list[Any]]] = {}
    for criterion in criteria:
        control_ids = requirements[criterion].control_ids
        facets = requirement_facets(index, catalog, vectors.vectors(control_ids), control_ids)
        lexical, dense = index.scores(facets)
        out[criterion] = {
            method.value: documents_in_order(index.rank(facets, method, k=200))
            for method in (Method.LEXICAL, Method.DENSE)
        } | {"best": [float(lexical.max()), float(dense.max())]}
    return out


def recall(ranked: list[str], wanted: set[str], k: int) -> float:
    return len(wanted & set(ranked[:k])) / len(wanted)


def recall_table(data: Path, work: Path) -> None:
    procedures = sorted((data / "procedures").glob("*.md"))
    labels = _labels(data)
    with open_kit(work / "recall") as kit:
        draft(kit, procedures, "SOC 2")
        rows = artifact_rows(kit)
        criteria = [c for c in sorted(labels) if c in rows and labels[c]]
        singles = single_rankings(kit, criteria)
    print(
        f"recall: {len(procedures)} procedures uploaded, SOC 2, {len(criteria)} labelled "
        f"criteria, dense model {default_embedder().name}"
    )
    _print_recall(criteria, {c: {f"{p}.md" for p in labels[c]} for c in criteria}, rows, singles)
    found = Counter(str(rows[c]["proposal"]) for c in rows)
    print(f"  proposals over all {len(rows)} SOC 2 criteria: {dict(sorted(found.items()))}")


def _print_recall(
    criteria: list[str],
    wanted: dict[str, set[str]],
    rows: dict[str, dict[str, Any]],
    singles: dict[str, dict[str, list[Any]]],
) -> None:
    """Macro recall@k per ranking, and micro (labelled documents found of all labelled)."""
    criteria = [c for c in criteria if wanted[c]]
    table: dict[str, dict[int, list[float]]] = {
        name: {k: [] for k in KS} for name in ("artifact", "lexical", "dense")
    }
    micro: dict[str, int] = Counter()
    for criterion in criteria:
        rankings = {"artifact": listed_documents(rows[criterion]), **singles[criterion]}
        for name in table:
            for k in KS:
                table[name][k].append(recall(rankings[name], wanted[criterion], k))
            micro[name] += len(wanted[criterion] & set(rankings[name][:10]))
    total = sum(len(wanted[c]) for c in criteria)
    print(f"  {'ranking':<22}{'recall@5':>10}{'recall@10':>11}{'found@10':>10}")
    means = {n: {k: sum(v) / len(v) for k, v in row.items()} for n, row in table.items()}
    for name, row in means.items():
        label = "artifact evidence list" if name == "artifact" else f"{name} only"
        print(f"  {label:<22}{row[5]:>10.3f}{row[10]:>11.3f}{micro[name]:>6}/{total}")
    better = max(means["lexical"][10], means["dense"][10])
    print(
        f"  artifact - better single @10: {means['artifact'][10] - better:+.3f}; "
        f"artifact - lexical @5: {means['artifact'][5] - means['lexical'][5]:+.3f}"
    )


def calibration(data: Path, work: Path, half: int) -> None:
    everything = sorted((data / "procedures").glob("*.md"))
    uploaded = [p for p in everything if in_half(p.stem, half)]
    names = {p.stem for p in uploaded}
    labels = _labels(data)
    with open_kit(work / f"calibration-{half}") as kit:
        draft(kit, uploaded, "SOC 2")
        rows = artifact_rows(kit)
        criteria = [c for c in sorted(labels) if c in rows and labels[c]]
        singles = single_rankings(kit, criteria)
    covered = {c: bool(names & set(labels[c])) for c in criteria}
    uploaded_labels = {c: {f"{p}.md" for p in labels[c] if p in names} for c in criteria}
    proposals = {c: str(rows[c]["proposal"]) for c in criteria}
    print(
        f"calibration, half {half} (sha256(name)[0] % 2 == {half}): {len(uploaded)} of "
        f"{len(everything)} procedures uploaded; {sum(covered.values())} criteria covered, "
        f"{len(criteria) - sum(covered.values())} uncovered"
    )
    print(f"  {'proposal':<22}{'covered':>9}{'uncovered':>11}")
    for proposal in ("evidence_found", "weak_evidence", "no_evidence_found"):
        on = Counter(covered[c] for c in criteria if proposals[c] == proposal)
        print(f"  {proposal:<22}{on[True]:>9}{on[False]:>11}")
    found, none = _rates(criteria, covered, lambda c: proposals[c])
    print(
        f"  artifact: uncovered proposed evidence_found {found:.2f} (target <= 0.15); "
        f"covered proposed no_evidence_found {none:.2f} (target <= 0.20)"
    )
    for position, method in enumerate(("lexical", "dense")):
        best = _best_threshold(criteria, covered, _best_score(singles, position))
        print(
            f"  {method} best score, best single threshold {best[2]:.3f}: uncovered found "
            f"{best[0]:.2f}, covered none {best[1]:.2f}"
        )
    print("  recall on this half (labels restricted to the uploaded procedures):")
    _print_recall(criteria, uploaded_labels, rows, singles)
    for criterion in criteria:
        if not covered[criterion] and proposals[criterion] != "no_evidence_found":
            print(f"    uncovered {criterion} {proposals[criterion]}: {rows[criterion]['reason']}")


def _rates(
    criteria: list[str], covered: dict[str, bool], proposal: Callable[[str], str]
) -> tuple[float, float]:
    uncovered = [c for c in criteria if not covered[c]]
    inside = [c for c in criteria if covered[c]]
    found = sum(proposal(c) == "evidence_found" for c in uncovered) / max(len(uncovered), 1)
    none = sum(proposal(c) == "no_evidence_found" for c in inside) / max(len(inside), 1)
    return found, none


def _best_score(singles: dict[str, dict[str, list[Any]]], position: int) -> Callable[[str], float]:
    return lambda criterion: float(singles[criterion]["best"][position])


def _thresholded(score: Callable[[str], float], threshold: float) -> Callable[[str], str]:
    return lambda c: "evidence_found" if score(c) >= threshold else "no_evidence_found"


def _best_threshold(
    criteria: list[str], covered: dict[str, bool], score: Callable[[str], float]
) -> tuple[float, float, float]:
    """The threshold on one retriever's best score that minimises the two error rates'
    sum, found by looking at the labels: a bound no deployed threshold reaches."""
    options = []
    for threshold in sorted({score(c) for c in criteria}):
        found, none = _rates(criteria, covered, _thresholded(score, threshold))
        options.append((found + none, found, none, threshold))
    _, found, none, threshold = min(options)
    return found, none, threshold


def timing(data: Path, work: Path) -> None:
    procedures = sorted((data / "procedures").glob("*.md"))
    # The catalogue vectors' file cache lives in the installation's storage directory:
    # a new one, so the first assessment embeds the catalogue as a new installation does.
    _home(work / "timing-home")
    for label in ("first assessment", "second assessment, same catalogue"):
        forget_cached_vectors()  # a new process: only the file cache can help
        with open_kit(work / label.split(",")[0].replace(" ", "-")) as kit:
            timings = draft(kit, procedures, "SOC 2")
        steps = "  ".join(f"{n} {s:.1f}s" for n, s in timings.items() if n != "total")
        print(f"{label} (SOC 2): total {timings['total']:.1f}s  ({steps})")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (whole program): {peak:.0f} MiB")


def _home(path: Path) -> None:
    os.environ["LIFECYCLE_HOME"] = str(path)
    reset_settings()


def _labels(data: Path) -> dict[str, list[str]]:
    loaded: dict[str, list[str]] = json.loads((data / "labels-soc2.json").read_text())[
        "requirements"
    ]
    return loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--only", choices=("recall", "calibration", "timing"))
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-evidence-"))
    _home(work / "home")  # recall and calibration share one catalogue-vector cache
    if args.only in (None, "recall"):
        recall_table(args.data, work)
    if args.only in (None, "calibration"):
        for half in (0, 1):
            calibration(args.data, work, half)
    if args.only in (None, "timing") and not args.skip_timing:
        timing(args.data, work)


if __name__ == "__main__":
    main()
