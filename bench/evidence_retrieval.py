"""Evidence retrieval on the labelled procedures: macro recall@5 and @10 per SOC 2 criterion,
fused against lexical alone and dense alone in the same run; then time and peak memory of
ingest -> index -> pre-analysis -> evidence for the same documents, twice on one catalogue
(the second assessment's catalogue vectors come from the cache).

    python -m bench.evidence_retrieval [--data ../shared/data/evidence]

A criterion's labelled procedures are the documents JupiterOne maps to it; a hit at k is a
labelled document among the first k distinct documents of the criterion's evidence ranking.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import tempfile
import time
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


def _upload(kit: Kit, procedures: Path) -> int:
    paths = sorted(procedures.glob("*.md"))
    for path in paths:
        kit.add_document(path.name, path.read_bytes())
    kit.session.commit()
    return len(paths)


def recall_table(
    index: EvidenceIndex, vectors: CatalogVectors, labels: dict[str, list[str]]
) -> dict[str, dict[int, float]]:
    catalog = vectors.catalog
    choice = resolve([catalog], "SOC 2")
    assert choice is not None
    requirements = {r.id: r for r in linked_requirements(choice, [catalog])}
    table: dict[str, dict[int, list[float]]] = {m.value: {k: [] for k in KS} for m in Method}
    # What any fusion could reach: the labelled documents either method puts in its top k.
    union: dict[int, list[float]] = {k: [] for k in KS}
    for criterion, procedures in sorted(labels.items()):
        requirement = requirements.get(criterion)
        if requirement is None or not procedures:
            continue
        cached = vectors.vectors(requirement.control_ids)
        facets = requirement_facets(index, catalog, cached, requirement.control_ids)
        wanted = {f"{p}.md" for p in procedures}
        tops: dict[Method, list[str]] = {}
        for method in Method:
            documents = tops[method] = documents_in_order(index.rank(facets, method, k=200))
            for k in KS:
                table[method.value][k].append(len(wanted & set(documents[:k])) / len(wanted))
        for k in KS:
            either = set(tops[Method.LEXICAL][:k]) | set(tops[Method.DENSE][:k])
            union[k].append(len(wanted & either) / len(wanted))
    table["either@k"] = union
    return {m: {k: sum(v) / len(v) for k, v in row.items()} for m, row in table.items()} | {
        "criteria": {0: float(len(table[Method.FUSED.value][KS[0]]))}
    }


def assess(work: Path, procedures: Path, framework: str) -> tuple[dict[str, float], dict[str, Any]]:
    """ingest -> index -> pre-analysis -> evidence analysis, timed step by step."""
    timings: dict[str, float] = {}
    method: dict[str, Any] = {}
    with open_kit(work) as kit:
        kit.framework = framework
        started = time.perf_counter()
        _upload(kit, procedures)
        for step in (
            Step.INGEST_DOCUMENTS,
            Step.INDEX_KB,
            Step.RUN_SCF_PRE_ANALYSIS,
            Step.CREATE_SCOPE,
            Step.CREATE_SOA_DRAFT,
            Step.RUN_EVIDENCE_ANALYSIS,
        ):
            begun = time.perf_counter()
            kit.run_step(step)
            produced = kit.results[step].artifact
            if produced is not None:
                kit.approve(produced.kind)
                kit.session.commit()
            timings[step.value] = time.perf_counter() - begun
        timings["total"] = time.perf_counter() - started
        # The SoA draft asks first, so it is the step that embeds what the cache lacks.
        drafts = [
            kit.content(k)["method"] for k in (ArtifactKind.SOA, ArtifactKind.EVIDENCE_ANALYSIS)
        ]
        method = {
            "catalog_texts_embedded": sum(m["catalog_texts_embedded"] for m in drafts),
            "catalog_vectors_reused": drafts[0]["catalog_vectors_reused"],
        }
    return timings, method


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument(
        "--framework",
        default="SCF",
        help="what the timed assessments select (SCF: every control of the catalogue)",
    )
    args = parser.parse_args()
    procedures = args.data / "procedures"
    labels: dict[str, list[str]] = json.loads((args.data / "labels-soc2.json").read_text())[
        "requirements"
    ]
    catalog = shipped_catalog()
    embedder = default_embedder()
    work = Path(tempfile.mkdtemp(prefix="bench-evidence-"))
    with open_kit(work / "recall") as kit:
        count = _upload(kit, procedures)
        kit.run_step(Step.INGEST_DOCUMENTS)
        kit.run_step(Step.INDEX_KB)
        index = EvidenceIndex.load(kit.session, kit.assessment.id, embedder)
        vectors = CatalogVectors(catalog, embedder, work / "catalog-vectors")
        table = recall_table(index, vectors, labels)
    criteria = int(table.pop("criteria")[0])
    # Not a ranking: the labelled documents in the union of the two methods' top k (2k slots).
    either = table.pop("either@k")
    print(
        f"evidence retrieval: {count} procedures, {index.size} passages, {criteria} SOC 2 "
        f"criteria with labels, {catalog.info.name} {catalog.info.version}, "
        f"dense model {embedder.name}"
    )
    print(f"  {'method':<10}{'recall@5':>10}{'recall@10':>11}")
    for method, row in table.items():
        print(f"  {method:<10}{row[5]:>10.3f}{row[10]:>11.3f}")
    print(
        f"  {'either@k':<10}{either[5]:>10.3f}{either[10]:>11.3f}"
        "  (lexical or dense top k, 2k slots)"
    )
    better = max(table["lexical"][10], table["dense"][10])
    print(f"  fused - better of the two at @10: {table['fused'][10] - better:+.3f} (target +0.10)")
    if args.skip_timing:
        return
    # The catalogue vectors' file cache lives in the installation's storage directory.
    os.environ["LIFECYCLE_HOME"] = str(work / "home")
    reset_settings()
    for label in ("first assessment", "second assessment, same catalogue"):
        forget_cached_vectors()  # a new process: only the file cache can help
        timings, used = assess(
            work / label.split(",")[0].replace(" ", "-"), procedures, args.framework
        )
        steps = "  ".join(
            f"{name} {seconds:.1f}s" for name, seconds in timings.items() if name != "total"
        )
        print(
            f"{label} ({args.framework}): total {timings['total']:.1f}s  ({steps}); "
            "catalogue texts "
            f"embedded {used['catalog_texts_embedded']}, control vectors from cache "
            f"{used['catalog_vectors_reused']}"
        )
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (whole program): {peak:.0f} MiB")


if __name__ == "__main__":
    main()
