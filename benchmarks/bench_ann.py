"""Approximate vector indexes (FAISS) against exact search: recall, nDCG, build time, latency, size.

Two corpora in one run:
- SciFact (5,183 abstracts, 300 queries) embedded with all-MiniLM-L6-v2: recall of each index's
  top-100 documents against exact search, and the nDCG@10 change;
- a synthetic million-vector set (generated, not downloaded): random unit vectors plus, for each
  of 1,000 queries, 10 planted neighbours (cosine ≈ 0.89 to their query): recall of the planted
  neighbours in the top-10 and of the exact top-100 in the top-100. Random vectors have no
  cluster structure, so this is a hard case for IVF; real embeddings cluster.
Build time, query time (all queries in one batch, ms per query) and bytes per vector (the saved
index file) for each index. ``python bench_ann.py [n_vectors] [dim]``.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np
from common import mirror, save

SCIFACT_INDEXES = ["flat", "hnsw(M=32,efSearch=16)", "hnsw(M=32,efSearch=64)", "hnsw(M=32,efSearch=256)",
                   "ivf(nlist=256,nprobe=4)", "ivf(nlist=256,nprobe=16)", "ivf(nlist=256,nprobe=64)",
                   "ivfpq(nlist=256,nprobe=16,m=48,nbits=8)"]
SYNTHETIC_INDEXES = ["flat", "hnsw(M=16,efSearch=64)", "hnsw(M=16,efSearch=256)", "ivf(nlist=1024,nprobe=16)",
                     "ivf(nlist=1024,nprobe=64)", "ivfpq(nlist=1024,nprobe=16,m=16,nbits=8)",
                     "ivfpq(nlist=1024,nprobe=64,m=16,nbits=8)"]
THREADS = os.cpu_count() or 1


def measure(vectors: np.ndarray, queries: np.ndarray, spec_text: str, k: int, built: dict) -> tuple[np.ndarray, dict]:
    """Search with one index; indexes that differ only in search parameters are built once
    (``built`` keeps them), as the retriever's cache does."""
    import faiss

    from grainlab.retrieval.ann import IndexSpec, build_index, search_index, set_search_params

    spec = IndexSpec.parse(spec_text)
    if (spec.kind, spec.build) not in built:
        tick = time.perf_counter()
        index = build_index(vectors, spec, threads=THREADS)
        build_s = time.perf_counter() - tick
        with tempfile.TemporaryDirectory() as folder:
            path = os.path.join(folder, "index.faiss")
            faiss.write_index(index, path)
            size = os.path.getsize(path)
        built[(spec.kind, spec.build)] = (index, build_s, size)
    index, build_s, size = built[(spec.kind, spec.build)]
    set_search_params(index, spec)
    tick = time.perf_counter()
    ids, _ = search_index(index, queries, k)
    query_ms = 1000 * (time.perf_counter() - tick) / len(queries)
    return ids, {"index": spec.canonical, "build_s": round(build_s, 2), "query_ms": round(query_ms, 3),
                 "bytes_per_vector": round(size / len(vectors), 1)}


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean([len(set(f[f >= 0]) & set(t)) / len(t) for f, t in zip(found, truth)]))


def scifact_rows() -> list[dict]:
    from grainlab.chunking import get_chunker
    from grainlab.data import load_dataset
    from grainlab.evaluation.measures import evaluate_run
    from grainlab.retrieval import DenseRetriever

    data = load_dataset("scifact", mirror=mirror())
    units = get_chunker("none").chunk_many(data.corpus.values())
    exact = DenseRetriever("sentence-transformers/all-MiniLM-L6-v2").index(units)
    vectors = exact.embeddings
    queries = exact._embed(list(data.queries.values()), "query")
    rows, truth, exact_ndcg, built = [], None, None, {}
    for spec in SCIFACT_INDEXES:
        ids, row = measure(vectors, queries, spec, 100, built)
        truth = ids if truth is None else truth
        run = {qid: [(units[i].doc_id, float(-rank)) for rank, i in enumerate(ids[r]) if i >= 0]
               for r, qid in enumerate(data.queries)}
        ndcg = float(evaluate_run(run, data.qrels, ["nDCG@10"])["value"].mean())
        exact_ndcg = ndcg if exact_ndcg is None else exact_ndcg
        rows.append({"corpus": f"SciFact MiniLM ({len(units):,} × {vectors.shape[1]}, 300 queries)", **row,
                     "recall@100_vs_exact": round(recall(ids, truth), 4), "nDCG@10": round(ndcg, 4),
                     "nDCG@10_change": round(ndcg - exact_ndcg, 4)})
    return rows


def synthetic(n: int, dim: int, n_queries: int = 1000, planted: int = 10, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)

    def unit(x: np.ndarray) -> np.ndarray:
        return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)

    vectors = unit(rng.standard_normal((n, dim), dtype=np.float32))
    queries = unit(rng.standard_normal((n_queries, dim), dtype=np.float32))
    slots = rng.choice(n, size=(n_queries, planted), replace=False)
    for row in range(n_queries):
        vectors[slots[row]] = unit(queries[row] + 0.5 * unit(rng.standard_normal((planted, dim), dtype=np.float32)))
    return vectors, queries, slots


def synthetic_rows(n: int, dim: int) -> list[dict]:
    vectors, queries, planted = synthetic(n, dim)
    rows, truth, built = [], None, {}
    for spec in SYNTHETIC_INDEXES:
        ids, row = measure(vectors, queries, spec, 100, built)
        truth = ids if truth is None else truth
        rows.append({"corpus": f"synthetic ({n:,} × {dim}, 1,000 queries)", **row,
                     "recall@100_vs_exact": round(recall(ids, truth), 4),
                     "planted_recall@10": round(recall(ids[:, :10], planted), 4)})
        print(rows[-1], flush=True)
    return rows


def main(n: int = 1_000_000, dim: int = 128) -> None:
    import faiss

    rows = scifact_rows() + synthetic_rows(n, dim)
    save("ann", {"faiss": faiss.__version__, "threads": THREADS, "rows": rows})


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:3]))
