"""Evidence an assessor can trust, measured on two labelled corpora and two frameworks.

- `soc2`: the 141 procedures of `../shared/data/evidence/` with their SOC 2 labels;
- `iso27001`: the 53 policies of `../shared/data/evidence-iso27001/` with their ISO/IEC
  27001:2022 Annex A labels, their own control references masked (so a ranking that reads
  ids does not count). Every one of them is a draft (unfilled approval and date fields),
  which the product says; the figures are taken after a reviewer marks them adopted, as an
  assessor holding the signed versions would.

Per corpus, through the product's own path (ingest, index, pre-analysis, scope, SoA,
evidence analysis, in one process):
1. Lists: recall@1/3/5/10 of the labelled documents among the first k distinct documents
   of the artifact's evidence list, beside BM25 alone and dense alone over the same
   passages; list lengths; first citations that are not a practice (must be none); the
   share of first citations held by the most cited document.
2. Proposals, everything uploaded: precision of `evidence_found` (its citations include a
   labelled document) and its recall over the labelled requirements.
3. Calibration on a fixed half split (a hash of the name): a labelled requirement none of
   whose documents was uploaded is "uncovered". Uncovered proposed found, covered proposed
   none, Cohen's kappa of found/none against covered/uncovered, and the abstention share
   (weak or template). Both halves are run.
4. Time and peak memory of the path on the SOC 2 procedures (`--skip-timing` to skip).

    python -m bench.evidence_retrieval [--corpus soc2|iso27001] [--data ../shared/data]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.record import add_record_flag, record_if_asked
from orchestrator.catalog.matching import linked_requirements, resolve
from orchestrator.catalog.registry import shipped_catalog
from orchestrator.config.settings import reset_settings
from orchestrator.contracts.clock import utcnow
from orchestrator.contracts.documents import ADOPTED
from orchestrator.contracts.signals import ArtifactKind
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.judgement_models import DocumentJudgementAmendment
from orchestrator.knowledge.embedder import (
    Embedder,
    Vectors,
    default_embedder,
    set_default_embedder,
)
from orchestrator.knowledge.hybrid import EvidenceIndex, Method, documents_in_order
from orchestrator.knowledge.minilm_onnx import OnnxMiniLMEmbedder
from orchestrator.knowledge.vector_memo import VectorMemo
from orchestrator.runtime import registrations  # noqa: F401 (the drafting functions)
from orchestrator.service.proposal_quality import SHIPPED, cohen_kappa
from tests.support.services import Kit, open_kit
from workers.analysis.requirement_query import (
    CatalogVectors,
    forget_cached_vectors,
    requirement_facets,
)

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
KS = (1, 3, 5, 10)
DRAFTING = (
    Step.INGEST_DOCUMENTS,
    Step.INDEX_KB,
    Step.RUN_SCF_PRE_ANALYSIS,
    Step.CREATE_SCOPE,
    Step.CREATE_SOA_DRAFT,
    Step.RUN_EVIDENCE_ANALYSIS,
)


@dataclass(frozen=True)
class Corpus:
    name: str
    description: str
    folder: str
    documents: str  # the documents' folder inside it
    labels: str
    framework: str
    mask: re.Pattern[str] | None = None  # the documents' own control references
    adopt: bool = False  # a reviewer marks every document adopted before drafting


CORPORA = {
    "soc2": Corpus(
        "soc2",
        "141 security procedures (JupiterOne templates, rendered)",
        "evidence",
        "procedures",
        "labels-soc2.json",
        "SOC 2",
    ),
    "iso27001": Corpus(
        "iso27001",
        "53 ISMS policies (isms-core project), their control ids masked",
        "evidence-iso27001",
        "policies",
        "labels-iso27001.json",
        "ISO/IEC 27001:2022",
        mask=re.compile(r"A\.[5-8]\.\d+|Annex A|ISO/IEC 27001|ISO 27001"),
        adopt=True,
    ),
}


class Remembered:
    """The product's model, each distinct text embedded once for the whole bench: the
    halves upload the same documents again, and their vectors would be the same."""

    def __init__(self, model: Embedder) -> None:
        self.model = model
        # Bounded far above a corpus's passages: the product's memo keeps fewer.
        self._memo = VectorMemo(model.dimensions, max_texts=1 << 20)

    @property
    def name(self) -> str:
        return self.model.name

    @property
    def dimensions(self) -> int:
        return self.model.dimensions

    def embed(self, texts: Sequence[str]) -> Vectors:
        return self._memo.embed(texts, self.model.embed)


def in_half(name: str, half: int) -> bool:
    """The fixed split: the first byte of the name's SHA-256, even (0) or odd (1)."""
    return hashlib.sha256(name.encode()).digest()[0] % 2 == half


def documents_of(corpus: Corpus, data: Path, work: Path) -> list[Path]:
    """The corpus's documents, masked into `work` where the corpus says so."""
    found = sorted((data / corpus.folder / corpus.documents).glob("*.md"))
    if corpus.mask is None:
        return found
    masked = work / f"{corpus.name}-masked"
    masked.mkdir(parents=True, exist_ok=True)
    out = []
    for path in found:
        target = masked / path.name
        target.write_text(corpus.mask.sub("", path.read_text()))
        out.append(target)
    return out


def labels_of(corpus: Corpus, data: Path) -> dict[str, set[str]]:
    loaded: dict[str, list[str]] = json.loads((data / corpus.folder / corpus.labels).read_text())[
        "requirements"
    ]
    return {requirement: {f"{d}.md" for d in docs} for requirement, docs in loaded.items()}


def draft(kit: Kit, corpus: Corpus, paths: list[Path]) -> dict[str, float]:
    """Upload and draft through the evidence analysis, timed per step."""
    kit.framework = corpus.framework
    timings: dict[str, float] = {}
    started = time.perf_counter()
    documents = [kit.add_document(path.name, path.read_bytes()) for path in paths]
    if corpus.adopt:
        for document in documents:
            kit.session.add(_adopted(kit, document.id))
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


def _adopted(kit: Kit, document_id: Any) -> DocumentJudgementAmendment:
    return DocumentJudgementAmendment(
        tenant_id=kit.assessment.tenant_id,
        assessment_id=kit.assessment.id,
        document_id=document_id,
        adoption=ADOPTED,
        actor_id="user:bench-reviewer",
        reason="the signed versions are held by the assessor",
        idempotency_key=f"bench-{document_id}",
        request_sha256="0" * 64,
        created_at=utcnow(),
    )


def artifact_rows(kit: Kit) -> dict[str, dict[str, Any]]:
    content = kit.content(ArtifactKind.EVIDENCE_ANALYSIS)
    return {str(r["requirement_id"]): r for r in content["requirements"]}


def listed_documents(row: dict[str, Any]) -> list[str]:
    return list(dict.fromkeys(str(c["document"]) for c in row.get("candidates", [])))


def single_rankings(
    kit: Kit, framework: str, requirements: list[str]
) -> dict[str, dict[str, list[str]]]:
    """Per requirement, documents in order by BM25 alone and by dense cosine alone."""
    catalog = shipped_catalog()
    embedder = default_embedder()
    index = EvidenceIndex.load(kit.session, kit.assessment.id, embedder)
    vectors = CatalogVectors(catalog, embedder, None)
    choice = resolve([catalog], framework)
    assert choice is not None
    linked = {r.id: r for r in linked_requirements(choice, [catalog])}
    out: dict[str, dict[str, list[str]]] = {}
    for requirement in requirements:
        control_ids = linked[requirement].control_ids
        facets = requirement_facets(index, catalog, vectors.vectors(control_ids), control_ids)
        out[requirement] = {
            method.value: documents_in_order(index.rank(facets, method, k=index.size))
            for method in (Method.LEXICAL, Method.DENSE)
        }
    return out


def recall(ranked: Sequence[str], wanted: set[str], k: int) -> float:
    return len(wanted & set(ranked[:k])) / len(wanted)


def lists(corpus: Corpus, data: Path, work: Path) -> dict[str, Any]:
    paths = documents_of(corpus, data, work)
    labels = labels_of(corpus, data)
    with open_kit(work / f"{corpus.name}-lists") as kit:
        draft(kit, corpus, paths)
        rows = artifact_rows(kit)
        asked = [r for r in sorted(labels) if labels[r] and rows.get(r, {}).get("scf_controls")]
        singles = single_rankings(kit, corpus.framework, asked)
    print(
        f"{corpus.name}: {len(paths)} documents, {corpus.framework}, {len(asked)} labelled "
        f"requirements with linked SCF controls, model {default_embedder().name}"
    )
    print(f"  {'ranking':<24}" + "".join(f"{f'R@{k}':>8}" for k in KS))
    figures: dict[str, Any] = {
        "corpus": corpus.name,
        "description": corpus.description,
        "framework": corpus.framework,
        "documents": len(paths),
        "requirements": len(asked),
    }
    for name in ("artifact", Method.LEXICAL.value, Method.DENSE.value):
        ranked = {
            r: listed_documents(rows[r]) if name == "artifact" else singles[r][name] for r in asked
        }
        at = [sum(recall(ranked[r], labels[r], k) for r in asked) / len(asked) for k in KS]
        prefix = {"artifact": "recall", "lexical": "bm25"}.get(name, "dense")
        figures |= {f"{prefix}_at_{k}": round(f, 3) for k, f in zip(KS, at, strict=True)}
        label = {"artifact": "evidence list (product)", "lexical": "BM25 alone"}.get(
            name, "dense alone"
        )
        print(f"  {label:<24}" + "".join(f"{f:>8.3f}" for f in at))
    applicable = [r for r in rows.values() if r.get("proposal") is not None]
    lengths = [len(listed_documents(r)) for r in applicable]
    firsts = [r["candidates"][0] for r in applicable if r.get("candidates")]
    not_practice = [c for c in firsts if not str(c.get("verdict", "")).startswith("specific")]
    held = Counter(str(c["document"]) for c in firsts).most_common(1)
    print(
        f"  lists: {len(applicable)} requirements, documents listed min {min(lengths)} / "
        f"median {sorted(lengths)[len(lengths) // 2]} / max {max(lengths)}; most cited first "
        f"document {held[0][1] if held else 0} of {len(firsts)}"
    )
    print(
        f"  first citations that are not a practice: "
        f"{sum(1 for c in not_practice if 'not evidence on its own' in str(c.get('verdict')))}"
    )
    found = [r for r in asked if rows[r]["proposal"] == "evidence_found"]
    right = [r for r in found if labels[r] & {str(c["document"]) for c in rows[r]["evidence"]}]
    print(
        f"  evidence_found: precision {len(right) / max(len(found), 1):.3f} "
        f"({len(right)} of {len(found)} cite a labelled document), recall "
        f"{len(found) / len(asked):.3f} of the labelled requirements"
    )
    proposals = Counter(str(r["proposal"]) for r in applicable)
    print(
        f"  proposals over all {len(applicable)} applicable rows: {dict(sorted(proposals.items()))}"
    )
    return figures | {
        "precision_found": round(len(right) / max(len(found), 1), 3),
        "recall_found": round(len(found) / len(asked), 3),
    }


def calibration(corpus: Corpus, data: Path, work: Path, half: int) -> dict[str, float]:
    everything = documents_of(corpus, data, work)
    uploaded = [p for p in everything if in_half(p.stem, half)]
    names = {p.name for p in uploaded}
    labels = labels_of(corpus, data)
    with open_kit(work / f"{corpus.name}-half-{half}") as kit:
        draft(kit, corpus, uploaded)
        rows = artifact_rows(kit)
    asked = [r for r in sorted(labels) if labels[r] and rows.get(r, {}).get("scf_controls")]
    covered = {r: bool(names & labels[r]) for r in asked}
    proposal = {r: str(rows[r]["proposal"]) for r in asked}
    uncovered = [r for r in asked if not covered[r]]
    inside = [r for r in asked if covered[r]]
    found_out = sum(proposal[r] == "evidence_found" for r in uncovered) / max(len(uncovered), 1)
    none_in = sum(proposal[r] == "no_evidence_found" for r in inside) / max(len(inside), 1)
    decided = [r for r in asked if proposal[r] in ("evidence_found", "no_evidence_found")]
    kappa = (
        cohen_kappa([(proposal[r] == "evidence_found", covered[r]) for r in decided])
        if decided
        else 0.0
    )
    abstained = 1 - len(decided) / len(asked)
    print(
        f"  half {half}: {len(uploaded)} of {len(everything)} documents, {len(inside)} covered "
        f"and {len(uncovered)} uncovered requirements: uncovered proposed found "
        f"{found_out:.2f}, covered proposed none {none_in:.2f}, kappa {kappa:.2f} on "
        f"{len(decided)} decided, abstained (weak or template) {abstained:.2f}"
    )
    return {
        "uncovered_found": found_out,
        "covered_none": none_in,
        "kappa": kappa,
        "abstained": abstained,
    }


def timing(corpus: Corpus, data: Path, work: Path) -> None:
    paths = documents_of(corpus, data, work)
    # The catalogue vectors' file cache lives in the installation's storage directory:
    # a new one, so the first assessment embeds the catalogue as a new installation does.
    _home(work / "timing-home")
    for label in ("first assessment", "second assessment, same catalogue"):
        # A new process: only the file cache can help, and its model has embedded nothing.
        forget_cached_vectors()
        set_default_embedder(OnnxMiniLMEmbedder())
        with open_kit(work / label.split(",")[0].replace(" ", "-")) as kit:
            timings = draft(kit, corpus, paths)
        steps = "  ".join(f"{n} {s:.1f}s" for n, s in timings.items() if n != "total")
        print(f"{label} ({corpus.name}): total {timings['total']:.1f}s  ({steps})")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory (whole program): {peak:.0f} MiB")


def write_shipped(measured: list[dict[str, Any]]) -> None:
    """The figures the product shows beside a tenant's own (`lifecycle quality`): per
    corpus, the worse half of the calibration split."""
    shipped = {
        "model": default_embedder().name,
        "catalog": f"SCF {shipped_catalog().info.version}",
        "measured": utcnow().date().isoformat(),
        "by": "python -m bench.evidence_retrieval --write-shipped",
        "corpora": measured,
    }
    SHIPPED.write_text(json.dumps(shipped, indent=2) + "\n")
    print(f"wrote {SHIPPED}")


def _home(path: Path) -> None:
    os.environ["LIFECYCLE_HOME"] = str(path)
    reset_settings()


def _figures(measured: list[dict[str, Any]]) -> list[tuple[str, float, str]]:
    keys = [
        ("recall_at_10", "recall@10 of the evidence list"),
        ("bm25_at_10", "recall@10 of BM25 alone"),
    ]
    keys += [("precision_found", "precision of evidence_found"), ("kappa", "kappa of found/none")]
    return [
        (f"{label}, {m['corpus']}", m[key], "") for key, label in keys for m in measured if key in m
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--corpus", choices=sorted(CORPORA), action="append")
    parser.add_argument("--skip-timing", action="store_true")
    parser.add_argument("--skip-calibration", action="store_true")
    parser.add_argument(
        "--write-shipped",
        action="store_true",
        help=f"write the figures the product shows as its own ({SHIPPED.name})",
    )
    add_record_flag(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-evidence-"))
    _home(work / "home")  # every run shares one catalogue-vector cache
    set_default_embedder(Remembered(default_embedder()))
    measured = []
    for name in args.corpus or sorted(CORPORA, reverse=True):
        corpus = CORPORA[name]
        figures = lists(corpus, args.data, work)
        if not args.skip_calibration:
            print("  calibration on the half split (sha256(name)[0] % 2):")
            halves = [calibration(corpus, args.data, work, half) for half in (0, 1)]
            figures |= {
                key: round(max(h[key] for h in halves), 3)
                for key in ("uncovered_found", "covered_none", "abstained")
            } | {"kappa": round(min(h["kappa"] for h in halves), 3)}
        measured.append(figures)
    if args.write_shipped:
        write_shipped(measured)
    record_if_asked(args, "evidence_retrieval", _figures(measured))
    if not args.skip_timing:
        timing(CORPORA["soc2"], args.data, work)  # as a user meets it: every text embedded


if __name__ == "__main__":
    main()
