"""Chunk size across datasets (Bhat et al. 2025; notebook 01): fixed token chunks of several
sizes × retrievers, answer recall on stitched QA sets, nDCG@10 on SciFact."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from grainlab.evaluation.registry import ANSWER_RECALL
from grainlab.experiments import System, best_rows, markdown_table, retriever_label
from grainlab.studies.claims import Claim
from grainlab.studies.report import Report

CLAIMS = pd.DataFrame([
    {"claim": "64–128-token chunks are best on sets with short factoid answers (e.g. SQuAD)",
     "source": "Bhat et al. 2025, abstract (primary)"},
    {"claim": "512–1024-token chunks are best on sets needing broader context (e.g. COVID-QA, NarrativeQA)",
     "source": "Bhat et al. 2025, abstract (primary)"},
    {"claim": "Stella prefers larger chunks, Snowflake smaller: the best size depends on the encoder",
     "source": "Bhat et al. 2025, abstract (primary)"},
])
SETUP = ("fixed token chunks 64/128/256/512/1024, no overlap; short documents stitched into documents of "
         "≥50,000 characters; Recall@1..5 with a hit = answer string inside the retrieved chunk "
         "(secondary transcription)")
CLAIM_BY_DATASET = {
    "squad_dev_stitched": "Table 2: SQuAD (stitched) Recall@1 falls from .642/.609 at 64 tokens to .386/.429 at 1,024 "
                          "(Stella/Snowflake): small chunks best",
    "covid_qa_stitched": "abstract: 512–1024 tokens best on sets needing broader context (COVID-QA named)",
    "nq_open_oracle_stitched": "Table 2: NQ Recall@1 rises from .172/.150 at 64 tokens to .349/.477 at 1,024 "
                               "(Stella/Snowflake): large chunks best"}
"""What the paper says of each of our sets, from its Table 2 where the table has the set (SQuAD,
NQ) and from its abstract otherwise (COVID-QA): ``../shared/ANCHORS.md``."""
DATA_DEVIATION = {"nq_open_oracle_stitched": "NQ-open questions over their oracle passages stitched to ≥50,000 "
                                             "characters, not the paper's NQ documents"}
NOT_IN_PAPER = "not in the paper (document-level retrieval benchmark)"
FACTOID_SETS = ("squad_dev_stitched",)
PAPER_BEST = {"squad_dev_stitched": (64, 128), "nq_open_oracle_stitched": (512, 1024), "covid_qa_stitched": (512, 1024)}
CONTEXT_SETS = ("covid_qa_stitched", "nq_open_oracle_stitched")
"""Sets whose large chunks the paper finds best: COVID-QA by its abstract, NQ by its Table 2."""
SMALL, LARGE = 128, 512  # the inner edges of the paper's two ranges: the most conservative contrast


def claims(per_query: pd.DataFrame, measure: str, small: int = SMALL, large: int = LARGE) -> list[Claim]:
    """Per QA set × retriever in ``per_query``: the direction the paper gives that set
    (:data:`FACTOID_SETS`: ``small``-token chunks beat ``large`` ones; :data:`CONTEXT_SETS`: the
    reverse), compared on columns ``chunk_size``; sets run without both sizes get no claim."""
    out = []
    for (dataset, retriever), group in per_query.groupby(["dataset", "retriever_label"], sort=False):
        if dataset not in FACTOID_SETS + CONTEXT_SETS or not {small, large} <= set(group["chunk_size"]):
            continue  # not a set the paper's claim is about, or the contrast's sizes were not run
        factoid = dataset in FACTOID_SETS
        deviation = ("lexical retriever, not in the paper" if retriever == "BM25" else
                     f"{retriever} instead of Stella/Snowflake"
                     + ("" if "nomic" in retriever else "; chunks above 512 word pieces truncated"))
        if dataset in DATA_DEVIATION:
            deviation += f"; {DATA_DEVIATION[dataset]}"
        out.append(Claim(f"{small if factoid else large} tokens beat {large if factoid else small} "
                         f"({'small' if factoid else 'large'} chunks best on this set)", CLAIM_BY_DATASET[dataset],
                         small if factoid else large, large if factoid else small, measure, +1,
                         where={"dataset": dataset, "retriever_label": retriever}, deviation=deviation))
    return out


def chunker(size: int, tokenizer: str) -> str:
    return f"fixed_tokens(size={size},overlap=0,tokenizer={tokenizer})"


def systems(retrievers: Sequence[str], sizes: Sequence[int], tokenizer: str, aggregate: str | None) -> list[System]:
    """Every retriever × chunk size; tags ``retriever_label`` and ``chunk_size`` name them."""
    return [System(r, chunker(size, tokenizer), aggregate, tags={"retriever_label": retriever_label(r),
                                                                "chunk_size": size})
            for r in retrievers for size in sizes]


def gate_systems(retrievers: Sequence[str]) -> list[System]:
    """Whole documents, ranked as themselves (the SciFact sanity gates)."""
    return [System(r, "none", "max", tags={"retriever_label": retriever_label(r)}) for r in retrievers]


def measures(answer_ks: Sequence[int], is_qa: bool) -> list[str]:
    return [ANSWER_RECALL @ k for k in answer_ks] if is_qa else ["nDCG@10", "R@100"]


def report(aggregate: pd.DataFrame, primary: Mapping[str, str], gates: pd.DataFrame, note: str,
           verdicts: pd.DataFrame | None = None) -> Report:
    """Per dataset × retriever: the paper's claim, our best chunk size and the whole curve of the
    primary measure; then the SciFact sanity gates (measured against published values). The
    tested claims (``claims`` through ``verdict_table``) come first when given."""
    rows = []
    for dataset, measure in primary.items():
        data = aggregate[(aggregate["dataset"] == dataset) & (aggregate["measure"] == measure)]
        for _, best in best_rows(data, measure, ["retriever_label"]).iterrows():
            curve = data[data["retriever_label"] == best["retriever_label"]].set_index("chunk_size")["mean"]
            rows.append({"claim": CLAIM_BY_DATASET.get(dataset, NOT_IN_PAPER), "dataset": dataset,
                         "retriever": best["retriever_label"], "paper": CLAIM_BY_DATASET.get(dataset, "—"),
                         "ours": f"best at {int(best['chunk_size'])} tokens", "measure": measure,
                         **{str(int(s)): round(float(v), 3) for s, v in curve.sort_index().items()}})
    gates_md = markdown_table(gates[["retriever", "measure", "ours", "expected", "tolerance", "pass"]])
    return Report("Chunk size (Bhat et al. 2025)", pd.DataFrame(rows),
                  note + "\n\nSciFact whole-document sanity gates (nDCG@10):\n\n" + gates_md, verdicts=verdicts)


def size_contrasts(per_query: pd.DataFrame, measure: str, reference: int, larger: Sequence[int],
                   n_resamples: int = 10_000, seed: int = 0,
                   clusters: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """Per dataset × retriever: each ``larger`` chunk size against ``reference`` on ``measure``
    (paired; bootstrap CI; randomization test, Holm over all rows) — does the optimum move to
    larger chunks for an encoder that reads them whole? With ``clusters`` (dataset → qid → the unit
    questions share, e.g. their stitched document) the interval and the test resample and flip
    whole clusters, and ``clusters`` counts them."""
    from grainlab.evaluation.significance import (
        cluster_bootstrap_ci,
        cluster_randomization_test,
        holm,
        paired_comparison,
    )

    rows = []
    data = per_query[per_query["measure"] == measure]
    for (dataset, retriever), group in data.groupby(["dataset", "retriever_label"], sort=False):
        by_size = group.assign(system=group["chunk_size"].astype(int))
        present = set(by_size["system"])
        pairs = [(size, reference) for size in larger if size in present and reference in present]
        if not pairs:
            continue
        table = paired_comparison(by_size, pairs, measure, n_resamples=n_resamples, seed=seed)
        if clusters is not None:
            wide = by_size.pivot_table(index="qid", columns="system", values="value", aggfunc="mean")
            of_query = clusters[dataset]
            labels = np.array([of_query[str(q)] for q in wide.index])
            for i, (size, ref) in enumerate(pairs):
                a, b = wide[size].to_numpy(), wide[ref].to_numpy()
                table.loc[i, ["ci_low", "ci_high"]] = cluster_bootstrap_ci(a - b, labels, n_resamples=n_resamples,
                                                                            seed=seed)
                table.loc[i, "p_randomization"] = cluster_randomization_test(a, b, labels, n_resamples, seed)
            table["clusters"] = len(set(labels))
        rows.append(table.assign(dataset=dataset, retriever_label=retriever))
    result = pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()
    if not result.empty:
        result = result.rename(columns={"system": "chunk_size", "baseline": "reference_size"})
        result["p_randomization_holm"] = holm(result["p_randomization"].tolist())
    return result


def optimum_shift(aggregate: pd.DataFrame, tests: pd.DataFrame, measure: str, long_retrievers: Sequence[str],
                  alpha: float = 0.05) -> pd.DataFrame:
    """Per QA set: each short-context dense retriever's best chunk size on ``measure`` beside the
    long-context retrievers', and how many sizes above the reference size (``tests``, from
    ``size_contrasts``) a long-context retriever beats significantly (Holm p < ``alpha``) — the
    question whether the optimum moves to larger chunks once the encoder reads them whole."""
    rows = []
    data = aggregate[(aggregate["measure"] == measure) & (aggregate["retriever_label"] != "BM25")]
    for dataset, group in data.groupby("dataset", sort=False):
        best = {label: int(g.loc[g["mean"].idxmax(), "chunk_size"]) for label, g in group.groupby("retriever_label")}
        short = {label: size for label, size in best.items() if label not in long_retrievers}
        for label in long_retrievers:
            if label not in best:
                continue
            mine = tests[(tests["dataset"] == dataset) & (tests["retriever_label"] == label)]
            wins = mine[(mine["delta"] > 0) & (mine["p_randomization_holm"] < alpha)]
            rows.append({"dataset": dataset, "retriever_label": label, "best_size": best[label],
                         "short_context_best": ", ".join(f"{k}: {v}" for k, v in sorted(short.items())),
                         "moved_larger": best[label] > max(short.values(), default=0),
                         "larger_sizes_significantly_better": f"{len(wins)} of {len(mine)}"})
    return pd.DataFrame(rows)
