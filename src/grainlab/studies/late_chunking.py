"""Late chunking (Günther et al. 2024; notebook 03): the same chunks embedded on their own
(naive) or pooled from one pass over the whole document (late)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from grainlab.experiments import System
from grainlab.studies.report import Report

# Günther et al. 2024, Table 2: SciFact nDCG@10 ×100 with jina-embeddings-v2-small-en.
PAPER_SCIFACT = {"no chunking": 63.89, "naive": 64.20, "late": 66.10}
PAPER_MODEL = "jina-embeddings-v2-small-en (8,192 tokens)"
PAPER_BOUNDARY = "fixed 256 tokens"


def dense(model: str, max_length: int) -> str:
    return f"dense(model={model},max_length={max_length})"


def late(model: str, max_length: int, overlap: int) -> str:
    return f"late(model={model},overlap={overlap},max_length={max_length})"


def boundary_systems(dense_spec: str, late_spec: str, strategies: Mapping[str, str]) -> list[System]:
    """Whole documents, then naive and late for each boundary strategy (tags ``method``, ``boundary``)."""
    out = [System(dense_spec, "none", "max", label="no chunking", tags={"method": "no chunking", "boundary": "none"})]
    for name, spec in strategies.items():
        out += [System(spec_, spec, "max", label=f"{method} · {name}", tags={"method": method, "boundary": name})
                for method, spec_ in (("naive", dense_spec), ("late", late_spec))]
    return out


def sweep_systems(dense_spec: str, late_spec: str, sizes: Sequence[int], tokenizer: str) -> list[System]:
    """Naive and late at each fixed chunk size (tags ``method``, ``size``)."""
    return [System(spec_, f"fixed_tokens(size={size},overlap=0,tokenizer={tokenizer})", "max",
                   label=f"{method} · {size}", tags={"method": method, "size": size})
            for size in sizes for method, spec_ in (("naive", dense_spec), ("late", late_spec))]


def long_systems(dense_spec: str, late_spec: str, chunker: str) -> list[System]:
    """Naive and late over the units of long documents (answer recall over chunks)."""
    return [System(spec_, chunker, None, label=method, tags={"method": method})
            for method, spec_ in (("naive", dense_spec), ("late", late_spec))]


def report(scores: pd.Series, late_vs_naive: pd.DataFrame, note: str) -> Report:
    """SciFact nDCG@10 ×100 for the paper's three arms (fixed 256-token chunks), with the paired
    test of late against naive on the same chunks."""
    test = late_vs_naive.set_index("system")
    rows = []
    for arm, label in (("no chunking", "no chunking"), ("naive", f"naive · {PAPER_BOUNDARY}"),
                       ("late", f"late · {PAPER_BOUNDARY}")):
        row = {"claim": "late > naive > no chunking (SciFact nDCG@10 ×100)", "arm": label,
               "paper": PAPER_SCIFACT[arm], "ours": round(100 * float(scores[label]), 2)}
        if label in test.index:
            row.update({"delta vs naive": round(100 * float(test.loc[label, "delta"]), 2),
                        "p (randomization, Holm)": float(test.loc[label, "p_randomization_holm"])})
        rows.append(row)
    return Report("Late chunking (SciFact nDCG@10 ×100)", pd.DataFrame(rows), note)
