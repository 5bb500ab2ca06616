"""A learned combiner of the evidence list's signals, fitted on one labelled corpus and
checked on the other.

The evidence list orders documents by a weighted sum of four signals per document
(`workers.analysis.document_ranking.FEATURES`): its best passage's BM25 and cosine (each
scaled 0-1), its reach over the requirement's SCF control families, and how much more it
is about this requirement than about the others in scope. The shipped weights were set by
hand on the SOC 2 procedures. Here, per corpus, the product's own path drafts the
evidence analysis (as `bench.evidence_retrieval` does), the judge's signals are read per
labelled requirement, and a pairwise logistic model (each labelled document above each
other document of the same requirement, L2-regularised) is fitted on each corpus. Every
set of weights is then scored on both corpora: recall@1/3/5/10 of the labelled documents
among the first k documents. A set of weights counts only where it beats the shipped ones
on the corpus it was not fitted on without losing on the other.

    python -m bench.evidence_combiner [--data ../shared/data] [--record]
"""

from __future__ import annotations

import argparse
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from sqlalchemy import select

from bench.evidence_retrieval import (
    CORPORA,
    DEFAULT_DATA,
    KS,
    Corpus,
    Remembered,
    _home,
    artifact_rows,
    documents_of,
    draft,
    labels_of,
    listed_documents,
    open_kit,
    recall,
)
from bench.record import add_record_flag, record_if_asked
from orchestrator.catalog.registry import shipped_catalog
from orchestrator.contracts.steps import AssessmentLifecycleStep as Step
from orchestrator.db.models import Document
from orchestrator.knowledge.embedder import default_embedder, set_default_embedder
from workers.analysis.document_ranking import FEATURES, WEIGHTS
from workers.analysis.requirement_evidence import RequirementJudge

Matrix = NDArray[np.float64]
L2 = 0.001  # small: four weights, thousands of pairs
STEPS = 3000


@dataclass(frozen=True)
class Asked:
    """One labelled requirement: per document its features, whether it is labelled, its
    name; and the artifact's evidence list."""

    requirement: str
    features: Matrix
    labelled: NDArray[np.bool_]
    names: list[str]
    wanted: set[str]
    listed: list[str]


def collect(corpus: Corpus, data: Path, work: Path) -> list[Asked]:
    """Draft the corpus through the product's path and read the judge's signals."""
    paths = documents_of(corpus, data, work)
    labels = labels_of(corpus, data)
    out: list[Asked] = []
    with open_kit(work / f"{corpus.name}-combiner") as kit:
        draft(kit, corpus, paths)
        rows = artifact_rows(kit)
        names = {
            str(d.id): d.filename
            for d in kit.session.scalars(
                select(Document).where(Document.assessment_id == kit.assessment.id)
            )
        }
        judge = RequirementJudge(kit.context(Step.RUN_EVIDENCE_ANALYSIS), shipped_catalog())
        for requirement in sorted(labels):
            row = rows.get(requirement)
            if not labels[requirement] or not row or not row.get("scf_controls"):
                continue
            control_ids = [str(c) for c in row["scf_controls"]]
            judge.judge(control_ids)  # the documents' standing is calibrated as the job does
            signals = judge.signals(control_ids)
            if signals is None:
                continue
            features = judge.ranking.features(signals)
            # The features are what the product ranks by, not a copy of them.
            assert np.allclose(features @ np.array(WEIGHTS), judge.ranking.scores(signals))
            documents = [names[d] for d in judge.ranking.documents]
            out.append(
                Asked(
                    requirement,
                    features,
                    np.array([d in labels[requirement] for d in documents]),
                    documents,
                    labels[requirement],
                    listed_documents(row),
                )
            )
    return out


def fit(asked: list[Asked]) -> Matrix:
    """Pairwise logistic weights: each requirement's pairs weigh as much in all as any
    other requirement's, however many documents it has."""
    differences, weights = [], []
    for one in asked:
        good, bad = one.features[one.labelled], one.features[~one.labelled]
        if not len(good) or not len(bad):
            continue
        pairs = (good[:, None, :] - bad[None, :, :]).reshape(-1, one.features.shape[1])
        differences.append(pairs)
        weights.append(np.full(len(pairs), 1 / len(pairs)))
    x, w = np.vstack(differences), np.concatenate(weights)
    theta = np.zeros(x.shape[1])
    for _ in range(STEPS):  # gradient descent: convex, four unknowns
        p = 1 / (1 + np.exp(x @ theta))
        theta -= (-(x * (p * w)[:, None]).sum(axis=0) / w.sum() + L2 * theta) * 1.0
    return theta


def recalls(asked: list[Asked], weights: Matrix) -> list[float]:
    per = []
    for one in asked:
        score = one.features @ weights
        order = np.lexsort((np.arange(len(score)), -score))
        ranked = [one.names[i] for i in order]
        per.append([recall(ranked, one.wanted, k) for k in KS])
    return [float(f) for f in np.mean(per, axis=0)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    add_record_flag(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-combiner-"))
    _home(work / "home")
    set_default_embedder(Remembered(default_embedder()))
    corpora = sorted(CORPORA, reverse=True)
    asked = {name: collect(CORPORA[name], args.data, work) for name in corpora}
    for name in corpora:
        listed = np.mean([[recall(a.listed, a.wanted, k) for k in KS] for a in asked[name]], axis=0)
        print(
            f"{name}: {len(asked[name])} labelled requirements; the artifact's list "
            + " ".join(f"R@{k} {f:.3f}" for k, f in zip(KS, listed, strict=True))
        )
    candidates = {"shipped (set by hand on soc2)": np.array(WEIGHTS)}
    candidates |= {f"fitted on {name}": fit(asked[name]) for name in corpora}
    head = f"{'weights':<30}" + "".join(f"{f:>8}" for f in FEATURES)
    print(head + "".join(f"  {name:>34}" for name in corpora))
    figures: list[tuple[str, float, str]] = []
    for label, weights in candidates.items():
        shown = weights / weights[FEATURES.index("dense")]  # on the dense weight's scale
        cells = []
        for name in corpora:
            at = recalls(asked[name], weights)
            cells.append(" ".join(f"{f:.3f}" for f in at))
            figures += [
                (f"R@{k}, {name}, weights {label}", f, "")
                for k, f in zip(KS, at, strict=True)
                if k in (1, 10)
            ]
        print(
            f"{label:<30}"
            + "".join(f"{w:>8.2f}" for w in shown)
            + "".join(f"  {c:>34}" for c in cells)
        )
    print(f"  (per corpus: R@{'/'.join(str(k) for k in KS)} of the ranking by those weights)")
    record_if_asked(args, "evidence_combiner", figures)


if __name__ == "__main__":
    main()
