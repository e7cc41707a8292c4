"""BM25 index + search on SciFact: grainlab (bm25s) vs rank_bm25 with the same tokens."""

from __future__ import annotations

import tempfile

from common import mirror, save, timer

from grainlab.cache import ArtifactCache
from grainlab.chunking import get_chunker
from grainlab.data import load_dataset
from grainlab.retrieval import BM25Retriever


def main() -> None:
    from rank_bm25 import BM25Okapi

    data = load_dataset("scifact", mirror=mirror())
    units = get_chunker("none").chunk_many(data.corpus.values())
    queries = list(data.queries.values())
    t: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        retriever = BM25Retriever(cache=ArtifactCache(tmp))
        with timer(t, "grainlab_index_s"):
            retriever.index(units)
        with timer(t, "grainlab_search_s"):
            retriever.search(dict(data.queries), k=100, aggregate="max")
        tokens = retriever.tokenize([u.text for u in units])
        query_tokens = retriever.tokenize(queries)
        with timer(t, "rank_bm25_index_s"):
            reference = BM25Okapi(tokens)
        with timer(t, "rank_bm25_search_s"):
            for q in query_tokens:
                reference.get_scores(q)
    total_ours = t["grainlab_index_s"] + t["grainlab_search_s"]
    total_ref = t["rank_bm25_index_s"] + t["rank_bm25_search_s"]
    save("bm25", {"docs": len(units), "queries": len(queries), **t,
                  "speedup_total": round(total_ref / total_ours, 2)})


if __name__ == "__main__":
    main()
