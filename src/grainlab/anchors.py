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
