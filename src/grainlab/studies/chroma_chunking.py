"""Chroma's chunking evaluation (Smith & Troynikov 2024) as a grainlab study (notebook 08).

Five corpora, 472 questions with gold excerpts at character offsets; each chunker's units of all
five corpora form one index, a dense retriever returns the top 5 units per question, and the
retrieved units are scored against the excerpts: recall, precision, IoU and PrecisionΩ. Two
conventions are reported side by side (``evaluation.spans``): **Chroma's** — characters, each
retrieved chunk paying for its full length (``count=sum``), chunks placed at the first copy of
their text (``match=any_copy``), as the official code computes — and **deduplicated** —
characters, overlapping chunks paying once (``count=union``), chunks at their own offsets
(``match=exact``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from grainlab.data.types import Dataset
from grainlab.evaluation.registry import (
    SPAN_COVERED,
    SPAN_IOU,
    SPAN_PRECISION,
    SPAN_PRECISION_OMEGA,
    SPAN_RECALL,
    TOKENS,
)
from grainlab.evaluation.significance import paired_comparison
from grainlab.experiments import System
from grainlab.studies.claims import Claim
from grainlab.studies.report import Report

K = 5  # the report retrieves the top 5 chunks
CHROMA = {"count": "sum", "unit": "char", "match": "any_copy"}
DEDUPLICATED = {"unit": "char"}
CONVENTIONS = {"chroma": CHROMA, "deduplicated": DEDUPLICATED}

# The report's table, recall / precision / IoU in % (ANCHORS.md, "Chroma chunking evaluation"). A
# notebook's chunker labels name these configurations ("Recursive 200, overlap 0" is
# recursive_separators(size=200), "TokenText 250, overlap 125" fixed_tokens(size=250,overlap=125),
# "ClusterSemantic 200" cluster_semantic(size=200,piece=50)); report() matches rows by label.
PAPER = pd.DataFrame([
    {"chunker": c, "encoder": e, "recall": r, "precision": p, "iou": i}
    for c, rows in {
        "TokenText 250, overlap 0": {"all-MiniLM-L6-v2": (77.1, 3.3, 3.3)},
        "TokenText 250, overlap 125": {"all-MiniLM-L6-v2": (82.4, 3.6, 3.5)},
        "TokenText 200, overlap 0": {"all-MiniLM-L6-v2": (76.6, 4.1, 4.1), "text-embedding-3-large": (87.0, 5.2, 5.1)},
        "TokenText 800, overlap 400": {"text-embedding-3-large": (87.9, 1.4, 1.4)},
        "Recursive 200, overlap 0": {"all-MiniLM-L6-v2": (75.7, 6.5, 6.5), "text-embedding-3-large": (88.1, 7.0, 6.9)},
        "Recursive 250, overlap 0": {"all-MiniLM-L6-v2": (78.5, 5.4, 5.4)},
        "Recursive 400, overlap 0": {"text-embedding-3-large": (89.5, 3.6, 3.6)},
        "ClusterSemantic 200": {"all-MiniLM-L6-v2": (75.2, 7.2, 7.2), "text-embedding-3-large": (87.3, 8.0, 8.0)},
        "ClusterSemantic 250": {"all-MiniLM-L6-v2": (77.3, 6.1, 6.0)},
    }.items() for e, (r, p, i) in rows.items()])
PAPER_SOURCE = "Smith & Troynikov 2024, Chroma technical report (secondary transcription, ANCHORS.md)"


def measures(k: int = K) -> list[str]:
    """Recall, precision, IoU at ``k`` and PrecisionΩ in both conventions, whole-excerpt coverage
    and tokens read."""
    out = []
    for params in CONVENTIONS.values():
        out += [m.at(k, **params) for m in (SPAN_RECALL, SPAN_PRECISION, SPAN_IOU)]
        out.append(SPAN_PRECISION_OMEGA.at(unit="char", match=params.get("match", "exact")))
    return out + [SPAN_COVERED @ k, TOKENS @ k]


def measure_name(kind: str, convention: str, k: int = K) -> str:
    """The column of one metric (``recall``, ``precision``, ``iou``, ``omega``) in one convention."""
    params = CONVENTIONS[convention]
    if kind == "omega":
        return SPAN_PRECISION_OMEGA.at(unit="char", match=params.get("match", "exact"))
    return {"recall": SPAN_RECALL, "precision": SPAN_PRECISION, "iou": SPAN_IOU}[kind].at(k, **params)


def systems(chunkers: Mapping[str, str], retrievers: Mapping[str, str],
            matched: Mapping[str, str] | None = None) -> list[System]:
    """Every chunker (and each size-matched fixed baseline) × retriever over units (tags
    ``chunker_label``, ``retriever_label``, ``baseline_for``)."""
    out = []
    for r_label, retriever in retrievers.items():
        for label, spec in chunkers.items():
            out.append(System(retriever, spec, None, label=f"{label} · {r_label}",
                              tags={"chunker_label": label, "retriever_label": r_label, "baseline_for": ""}))
        for label, spec in (matched or {}).items():
            out.append(System(retriever, spec, None, label=f"fixed ≈ {label} · {r_label}",
                              tags={"chunker_label": f"fixed ≈ {label}", "retriever_label": r_label,
                                    "baseline_for": label}))
    return out


def with_corpus(per_query: pd.DataFrame, dataset: Dataset) -> pd.DataFrame:
    """``per_query`` with the corpus each question is about."""
    corpus_of = {q: next(iter(docs)) for q, docs in dataset.qrels.items()}
    return per_query.assign(corpus=per_query["qid"].map(corpus_of))


def versus_matched(per_query: pd.DataFrame, matched: Mapping[str, str], retrievers: Sequence[str],
                   measure: str, n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Each chunker against its size-matched fixed-size baseline on ``measure``: paired
    difference with its bootstrap interval and randomization p (Holm over the pairs)."""
    pairs = [(f"{label} · {r}", f"fixed ≈ {label} · {r}") for r in retrievers for label in matched]
    return paired_comparison(per_query, pairs, measure, n_resamples=n_resamples, seed=seed)


def recall_precision_points(aggregate: pd.DataFrame, retriever_label: str,
                            convention: str = "chroma") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Our recall and precision (%, ``convention``) per chunker for one retriever, with each
    chunker's ``family`` (its label's first word; the size-matched baselines are one family), and
    the report's points for the same encoder: ``(ours, paper)``, both with ``label, precision,
    recall``."""
    rows = aggregate[aggregate["retriever_label"] == retriever_label]
    means = rows.pivot_table(index="chunker_label", columns="measure", values="mean", sort=False)
    ours = pd.DataFrame({"label": means.index,
                         "precision": 100 * means[str(measure_name("precision", convention))].to_numpy(),
                         "recall": 100 * means[str(measure_name("recall", convention))].to_numpy()})
    ours["family"] = ["size-matched fixed" if label.startswith("fixed ≈") else label.split(" ")[0]
                      for label in ours["label"]]
    paper = PAPER[PAPER["encoder"] == retriever_label].rename(columns={"chunker": "label"})
    return ours, paper[["label", "precision", "recall"]].reset_index(drop=True)


# The report's contrasts (MiniLM column): (system, baseline, measure kind) — effects from its table.
PAPER_CONTRASTS = (("TokenText 250, overlap 125", "TokenText 250, overlap 0", "recall"),
                   ("Recursive 200, overlap 0", "TokenText 200, overlap 0", "iou"),
                   ("ClusterSemantic 200", "TokenText 200, overlap 0", "iou"),
                   ("ClusterSemantic 200", "Recursive 200, overlap 0", "iou"),
                   ("ClusterSemantic 250", "TokenText 250, overlap 0", "recall"))


def claims(retriever_label: str, chunkers: Sequence[str]) -> list[Claim]:
    """The report's pairwise differences (MiniLM column) that our chunkers can test, in Chroma's
    convention, compared on column ``chunker_label``."""
    paper = PAPER[PAPER["encoder"] == "all-MiniLM-L6-v2"].set_index("chunker")
    out = []
    for system, baseline, kind in PAPER_CONTRASTS:
        if system not in chunkers or baseline not in chunkers:
            continue
        effect = (paper.loc[system, kind] - paper.loc[baseline, kind]) / 100
        out.append(Claim(f"{system} beats {baseline} ({kind})",
                         f"{paper.loc[system, kind]:.1f} vs {paper.loc[baseline, kind]:.1f}", system, baseline,
                         measure_name(kind, "chroma"), +1, float(effect), {"retriever_label": retriever_label},
                         "our re-implementation of the chunkers; characters as in the official code"))
    return out


def report(aggregate: pd.DataFrame, retriever_label: str, note: str, verdicts: pd.DataFrame | None = None) -> Report:
    """For every configuration the report has (its MiniLM column): the report's recall /
    precision / IoU beside ours in Chroma's convention and in the deduplicated one (×100)."""
    means = aggregate.set_index(["chunker_label", "retriever_label", "measure"])["mean"]
    rows = []
    for _, paper in PAPER.iterrows():
        row = {"claim": f"{paper['chunker']} ({paper['encoder']})", "encoder": paper["encoder"],
               "paper": f"{paper['recall']:.1f} / {paper['precision']:.1f} / {paper['iou']:.1f}"}
        key = (paper["chunker"], retriever_label)
        if paper["encoder"] != "all-MiniLM-L6-v2" or (*key, measure_name("recall", "chroma")) not in means.index:
            row["ours"] = "not run (encoder not available offline)" if paper["encoder"] != "all-MiniLM-L6-v2" \
                else "not in this profile"
            rows.append(row)
            continue
        for convention in CONVENTIONS:
            values = [100 * means[(*key, measure_name(kind, convention))] for kind in ("recall", "precision", "iou")]
            text = " / ".join(f"{v:.1f}" for v in values)
            if convention == "chroma":
                row["ours"] = text
            else:
                row["ours (deduplicated)"] = text
        row["ours PrecisionΩ (chroma)"] = round(100 * means[(*key, measure_name("omega", "chroma"))], 1)
        rows.append(row)
    return Report("Chroma's chunking evaluation (recall / precision / IoU, %, top 5 chunks)", pd.DataFrame(rows),
                  note, floatfmt=".1f", verdicts=verdicts)
