"""The papers' numbers we compare against, each with its source (see paper_refs.bib).

These are the published values, printed beside ours; nothing of ours is derived from them.
"""

from __future__ import annotations

import pandas as pd

# SciFact whole-document sanity gates (nDCG@10): (expected, tolerance, source).
SCIFACT_GATES: dict[str, tuple[float, float, str]] = {
    "bm25": (0.68, 0.02, "BEIR BM25 0.665 (Thakur et al. 2021, Table 2); Pyserini flat 0.6789; "
                         "bm25s 0.3.16 measured on this mirror 0.6863 — gate 0.66–0.70"),
    "sentence-transformers/all-MiniLM-L6-v2": (0.6451, 0.01, "MTEB SciFact, all-MiniLM-L6-v2"),
    "BAAI/bge-small-en-v1.5": (0.7127, 0.015, "MTEB SciFact, bge-small-en-v1.5 (int8 ONNX copy offline)"),
}

BHAT_2025_CLAIMS = pd.DataFrame([
    {"claim": "64–128-token chunks are best on sets with short factoid answers (e.g. SQuAD)",
     "source": "Bhat et al. 2025, abstract (primary)"},
    {"claim": "512–1024-token chunks are best on sets needing broader context (e.g. COVID-QA, NarrativeQA)",
     "source": "Bhat et al. 2025, abstract (primary)"},
    {"claim": "Stella prefers larger chunks, Snowflake smaller: the best size depends on the encoder",
     "source": "Bhat et al. 2025, abstract (primary)"},
])

BHAT_2025_SETUP = ("fixed token chunks 64/128/256/512/1024, no overlap; short documents stitched into "
                   "documents of ≥50,000 characters; Recall@1..5 with a hit = answer string inside "
                   "the retrieved chunk (secondary transcription)")

SEMANTIC_CHUNKING_CLAIMS = pd.DataFrame([
    {"claim": "Max–Min segments stitched documents better than other splitters: AMI 0.85 / 0.90 vs "
              "0.68 / 0.70 for the next best", "paper value": "0.85 / 0.90 vs 0.68 / 0.70",
     "source": "Kiss et al. 2025, abstract"},
    {"claim": "Semantic chunking wins only on artificially stitched documents; fixed-size is as good or "
              "better on natively long ones", "paper value": "qualitative",
     "source": "Qu et al. 2024, 'Is Semantic Chunking Worth the Computational Cost?'"},
])

# Liu et al. (TACL 2024), GPT-3.5-Turbo on NQ-open, best_subspan_em; positions are 1-based.
LOST_IN_THE_MIDDLE_QA = pd.DataFrame(
    [{"setting": "20 documents", "position": p, "accuracy": a}
     for p, a in zip((1, 5, 10, 15, 20), (0.758, 0.572, 0.538, 0.554, 0.632))]
    + [{"setting": "10 documents", "position": p, "accuracy": a} for p, a in zip((1, 5, 10), (0.768, 0.612, 0.624))])
LOST_IN_THE_MIDDLE_BASELINES = {"closed-book": 0.561, "oracle": 0.883}
# Key–value retrieval, 140 keys, MPT-30B (the repository's EXPERIMENTS.md).
LOST_IN_THE_MIDDLE_KV_140 = pd.DataFrame(
    [{"setting": "140 keys", "position": p, "accuracy": a}
     for p, a in zip((1, 35, 70, 105, 140), (1.0, 0.936, 0.886, 0.804, 0.962))])

# Dense X Retrieval (Chen et al., EMNLP 2024; arXiv 2312.06648), passage Recall@k in %.
DENSE_X_SQUAD_R5 = pd.DataFrame([
    {"retriever": r, "passage": p, "proposition": q, "source": "Chen et al., SQuAD column, R@5"}
    for r, p, q in (("SimCSE", 29.5, 38.7), ("Contriever", 40.8, 50.7), ("DPR", 38.3, 41.4), ("GTR", 54.4, 63.3))
])
DENSE_X_AVERAGE = pd.DataFrame([
    {"retriever": r, "unit": u, "R@5": r5, "R@20": r20, "source": "Chen et al., average over 5 sets"}
    for r, rows in (("SimCSE", ((34.3, 49.1), (40.9, 56.8), (46.3, 61.7))),
                    ("Contriever", ((43.0, 62.8), (47.3, 66.1), (52.7, 70.5))),
                    ("DPR", ((57.3, 69.5), (59.2, 71.0), (59.9, 72.2))),
                    ("GTR", ((65.2, 76.6), (66.7, 78.4), (68.0, 79.2))))
    for u, (r5, r20) in zip(("passage", "sentence", "proposition"), rows)
])
DENSE_X_PROPOSITION_STATS = {"propositions_per_passage": 6.3, "words_per_proposition": 11.2}

# LongRAG (Jiang et al. 2024), NQ answer recall in % (Table 1) and reader EM.
LONGRAG_NQ_RECALL = pd.DataFrame(
    [{"unit": "passages", "paper corpus size": "22M", "units retrieved": k, "paper AR": v}
     for k, v in ((1, 52.24), (100, 89.92), (200, 91.30))]
    + [{"unit": "documents", "paper corpus size": "3M", "units retrieved": k, "paper AR": v}
       for k, v in ((1, 69.45), (5, 85.37), (10, 88.12))]
    + [{"unit": "grouped documents", "paper corpus size": "600K", "units retrieved": k, "paper AR": v}
       for k, v in ((1, 71.69), (4, 86.30), (8, 88.53))])
LONGRAG_NQ_READER_EM = {"EM": 62.7, "reader": "GPT-4o", "units": "4 grouped units (~30K tokens)"}
