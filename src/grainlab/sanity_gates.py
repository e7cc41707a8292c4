"""Published numbers shared by several studies, each with its source (see paper_refs.bib).

A paper's own numbers live in its study (``grainlab.studies.<paper>``); here only what more than
one study (and the tests) checks against. Nothing of ours is derived from them.
"""

from __future__ import annotations

# SciFact whole-document sanity gates (nDCG@10): (expected, tolerance, source).
SCIFACT_GATES: dict[str, tuple[float, float, str]] = {
    "bm25": (0.68, 0.02, "BEIR BM25 0.665 (Thakur et al. 2021, Table 2); Pyserini flat 0.6789; "
                         "bm25s 0.3.16 measured on this mirror 0.6863 — gate 0.66–0.70"),
    "sentence-transformers/all-MiniLM-L6-v2": (0.6451, 0.01, "MTEB SciFact, all-MiniLM-L6-v2"),
    # the offline copy's int8 weights run in float32 (models.onnx_float): 0.7130 measured, so MiniLM's
    # tolerance; the int8 graph's saturating integer products gave 0.7086 on an AVX2 EPYC
    "BAAI/bge-small-en-v1.5": (0.7127, 0.01, "MTEB SciFact, bge-small-en-v1.5 (int8 ONNX copy run in float32 offline)"),
    # f16 weights (the publisher's GGUF) move cosines by ~1e-4, so few ranks swap; the tolerance is
    # MiniLM's, which covers MTEB's own truncation and evaluation details.
    "nomic-ai/nomic-embed-text-v1.5": (0.7028, 0.01, "MTEB SciFact, nomic-embed-text-v1.5 768-d with its prefixes "
                                                     "(f16 GGUF on llama.cpp here)"),
}
