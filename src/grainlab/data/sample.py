"""Seeded subsets for quick profiles."""

from __future__ import annotations

import random

from grainlab.data.recipes import derivation
from grainlab.data.types import Dataset


@derivation
def sample_dataset(dataset: Dataset, n_queries: int, n_docs: int, seed: int = 0,
                   mode: str = "queries") -> Dataset:
    """A smaller dataset that keeps every sampled query's judged documents.

    ``mode="queries"`` samples queries, keeps their judged documents and fills the corpus
    with random other documents up to ``n_docs`` (IR sets, e.g. SciFact).
    ``mode="docs"`` samples ``n_docs`` documents and keeps queries judged only on them
    (stitched QA sets, where each question belongs to one long document).
    """
    rng = random.Random(seed)
    doc_ids = sorted(dataset.corpus)
    judged = {q: set(d for d, r in dataset.qrels.get(q, {}).items() if r > 0) for q in dataset.queries}
    if mode == "docs":
        keep_docs = set(rng.sample(doc_ids, min(n_docs, len(doc_ids))))
        candidates = sorted(q for q, docs in judged.items() if docs and docs <= keep_docs)
        queries = rng.sample(candidates, min(n_queries, len(candidates)))
    else:
        candidates = sorted(q for q, docs in judged.items() if docs)
        queries = rng.sample(candidates, min(n_queries, len(candidates)))
        keep_docs = set().union(*(judged[q] for q in queries)) if queries else set()
        others = [d for d in doc_ids if d not in keep_docs]
        keep_docs |= set(rng.sample(others, max(0, min(len(others), n_docs - len(keep_docs)))))
    ordered = [d for d in dataset.corpus if d in keep_docs]
    subset = dataset.subset(query_ids=sorted(queries), doc_ids=ordered)
    subset.info = {**subset.info, "sample": {"n_queries": len(queries), "n_docs": len(ordered),
                                             "of_queries": len(dataset.queries), "of_docs": len(dataset.corpus),
                                             "seed": seed, "mode": mode}}
    return subset


def sample_label(dataset: Dataset, unit: str = "documents") -> str:
    """What a table's ``sample`` column should say the rows were computed on: ``"all 31 stitched
    documents"``, or for a :func:`sample_dataset` subset ``"2 of 31 stitched documents, 100 of 7,874
    questions (seed 0)"``."""
    info = dataset.info.get("sample")
    if not isinstance(info, dict):
        return f"all {len(dataset.corpus):,} {unit}"
    docs = f"{info['n_docs']:,} of {info['of_docs']:,}" if "of_docs" in info else f"{info['n_docs']:,}"
    queries = f"{info['n_queries']:,} of {info['of_queries']:,}" if "of_queries" in info else f"{info['n_queries']:,}"
    return f"{docs} {unit}, {queries} questions (seed {info['seed']})"
