"""Hybrid search, RRF and cross-encoder reranking measured stage by stage (notebook 06).

Every pipeline is a :class:`System` with :class:`Stages`; the engine scores each stage's run
(collapsed to documents, best unit first) with ir-measures. The diagnostics here read the
saved stage runs: what each retriever finds that the others miss, the RRF constant and depth
sweeps, and the queries the reranker cannot help.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import pandas as pd

from grainlab.data.types import Dataset
from grainlab.evaluation.measures import evaluate_run
from grainlab.evaluation.significance import compare_to_baseline
from grainlab.experiments import ExperimentResult, Stages, System
from grainlab.experiments.stored import stored_per_query, stored_systems
from grainlab.retrieval.aggregate import collapse_to_documents
from grainlab.retrieval.fusion import rrf, score_fusion
from grainlab.studies.claims import Claim, verdict_table
from grainlab.studies.report import Report
from grainlab.types import Chunk, Run

MEASURES = ("nDCG@10", "RR@10", "R@5", "R@20", "R@100")
# Published single-retriever SciFact nDCG@10 (BEIR Table 2; MTEB leaderboard).
PUBLISHED_NDCG10 = {"BM25": (0.665, "BEIR (Thakur et al. 2021)"), "all-MiniLM-L6-v2": (0.6451, "MTEB"),
                    "bge-small-en-v1.5": (0.7127, "MTEB")}
RRF_CLAIM = "a fused ranking beats the best single input (Cormack et al. 2009)"


def systems(retrievers: Mapping[str, str], chunker: str, granularity: str, fusions: Sequence[str] = ("rrf", "minmax"),
            reranker: str | None = None, candidate_k: int = 100, rerank_k: int = 20, context_k: int = 5,
            rrf_k: float = 60) -> list[System]:
    """Each single retriever (label → spec) and each fusion of all of them, each without and with
    the reranker (tags ``granularity``, ``fusion``, ``reranked``)."""
    fused_label = "+".join(retrievers)
    configs = [(label, spec, None) for label, spec in retrievers.items()]
    configs += [(f"{f}({fused_label})", tuple(retrievers.values()), f) for f in fusions]
    out = []
    for label, retriever, fusion in configs:
        for rerank in ([None, reranker] if reranker else [None]):
            stages = Stages(fusion=fusion, rrf_k=rrf_k, reranker=rerank, candidate_k=candidate_k,
                            rerank_k=rerank_k, context_k=context_k)
            out.append(System(retriever, chunker, "max", stages=stages, label=label + (" → rerank" if rerank else ""),
                              tags={"granularity": granularity, "fusion": fusion or "none",
                                    "reranked": rerank is not None}))
    return out


FUSION_NAMES = {"rrf": "RRF", "minmax": "min-max"}


def figure_name(system: str) -> str:
    """A system's name short enough for a panel title: a fusion of n lists as "RRF (n lists)" or
    "min-max (n lists)" (the full name lists every input: too long for a quarter of a page), a
    reranked system keeping its " → rerank"; every other name as it is."""
    base, arrow, rest = system.partition(" → ")
    fusion, paren, inputs = base.partition("(")
    if paren and fusion in FUSION_NAMES:
        base = f"{FUSION_NAMES[fusion]} ({inputs.rstrip(')').count('+') + 1} lists)"
    return base + arrow + rest


def single_labels(systems: pd.DataFrame) -> list[str]:
    """The systems with one retriever and no reranker, from an experiment's systems table."""
    return list(systems[(systems["fusion"] == "none") & ~systems["reranked"].astype(bool)]["system"])


def latency(result: ExperimentResult, n_queries: int) -> pd.DataFrame:
    """Milliseconds per query of every stage of every system (from the systems table's timings)."""
    rows = [{"granularity": row["granularity"], "system": row["system"], "stage": stage,
             "ms_per_query": 1000 * seconds / n_queries}
            for _, row in result.systems.iterrows() for stage, seconds in row["stage_seconds"].items()]
    return pd.DataFrame(rows)


def _relevant(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, set[str]]:
    return {q: {d for d, r in docs.items() if r > 0} for q, docs in qrels.items()}


def union_recall(candidate_runs: Mapping[str, Run], units: Sequence[Chunk], qrels, k: int) -> pd.DataFrame:
    """For each pair of retrievers: relevant (query, document) pairs found by both, only one,
    or neither within their top ``k`` candidates, and recall of their union."""
    unit_doc = {u.chunk_id: u.doc_id for u in units}
    found = {name: {q: {d for d, _ in r[:k]} for q, r in collapse_to_documents(run, unit_doc).items()}
             for name, run in candidate_runs.items()}
    relevant = _relevant(qrels)
    total = sum(len(v) for v in relevant.values())
    rows = []
    for a, b in itertools.combinations(found, 2):
        both = only_a = only_b = 0
        for q, rel in relevant.items():
            in_a, in_b = rel & found[a].get(q, set()), rel & found[b].get(q, set())
            both += len(in_a & in_b)
            only_a += len(in_a - in_b)
            only_b += len(in_b - in_a)
        rows.append({"a": a, "b": b, "k": k, "relevant": total, "both": both, "only_a": only_a,
                     "only_b": only_b, "recall_a": (both + only_a) / total, "recall_b": (both + only_b) / total,
                     "union_recall": (both + only_a + only_b) / total})
    return pd.DataFrame(rows)


def _document_means(run: Run, unit_doc: Mapping[str, str], qrels, measures: Sequence[str]) -> pd.Series:
    return evaluate_run(collapse_to_documents(run, dict(unit_doc)), qrels, measures).groupby("measure")["value"].mean()


def fusion_sweep(candidate_runs: Mapping[str, Run], units: Sequence[Chunk], qrels, rrf_ks: Sequence[float],
                 depths: Sequence[int], measures: Sequence[str] = ("nDCG@10", "R@100")) -> pd.DataFrame:
    """RRF over the candidate lists for each constant ``k`` and each candidate depth."""
    unit_doc = {u.chunk_id: u.doc_id for u in units}
    rows = []
    for depth in depths:
        cut = [{q: r[:depth] for q, r in run.items()} for run in candidate_runs.values()]
        for k in rrf_ks:
            for measure, value in _document_means(rrf(cut, k=k), unit_doc, qrels, measures).items():
                rows.append({"rrf_k": k, "candidate_depth": depth, "measure": measure, "value": value})
        for measure, value in _document_means(score_fusion(cut, "minmax"), unit_doc, qrels, measures).items():
            rows.append({"rrf_k": None, "candidate_depth": depth, "measure": f"minmax {measure}", "value": value})
    return pd.DataFrame(rows)


def reranker_ceiling(reranked: Run, units: Sequence[Chunk], qrels) -> pd.DataFrame:
    """Per query: whether any relevant document is inside the reranker's window at all (the
    ``reranked`` stage holds exactly the window's units)."""
    unit_doc = {u.chunk_id: u.doc_id for u in units}
    relevant = _relevant(qrels)
    return pd.DataFrame([{"qid": qid, "relevant_in_window": bool(relevant.get(qid, set()) & {unit_doc[u] for u, _ in r})}
                         for qid, r in reranked.items()])


def significance_vs_best_single(per_query: pd.DataFrame, singles: Sequence[str], measure: str = "nDCG@10",
                                stage: str = "context", n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Every system at ``stage`` against the best single retriever (Holm-corrected)."""
    data = per_query[(per_query["stage"] == stage) & (per_query["measure"] == measure)]
    means = data.groupby("system")["value"].mean()
    best = means[list(singles)].idxmax()
    return compare_to_baseline(data, best, measure, n_resamples=n_resamples, seed=seed)


def claims(per_query: pd.DataFrame, singles: Sequence[str], reranker_note: str = "", measure: str = "nDCG@10",
           stage: str = "context") -> list[Claim]:
    """Per granularity (compared on ``system`` at ``stage``): RRF over all retrievers beats the
    best single one (chosen on these queries: the strongest baseline, so the test is
    conservative), and the reranker beats the list it reranks — the RRF list and the best single."""
    out = []
    data = per_query[(per_query["stage"] == stage) & (per_query["measure"] == measure)]
    for granularity, part in data.groupby("granularity", sort=False):
        means = part.groupby("system")["value"].mean()
        best = str(means[[s for s in singles if s in means.index]].idxmax())
        fused = next((s for s in means.index if s.startswith("rrf(") and not s.endswith("→ rerank")), None)
        where = {"granularity": granularity, "stage": stage}
        if fused:
            out.append(Claim("RRF fusion beats the best single retriever", RRF_CLAIM, fused, best, measure, +1,
                             None, where, "SciFact; best single chosen on the same queries"))
            if f"{fused} → rerank" in means.index:
                out.append(Claim("the cross-encoder beats the fused list it reranks", "reranking the top candidates "
                                 "helps (no anchor number)", f"{fused} → rerank", fused, measure, +1, None, where,
                                 reranker_note))
        if f"{best} → rerank" in means.index:
            out.append(Claim("the cross-encoder beats the single list it reranks", "reranking the top candidates "
                             "helps (no anchor number)", f"{best} → rerank", best, measure, +1, None, where,
                             reranker_note))
    return out


def report(aggregate: pd.DataFrame, singles: Sequence[str], note: str, verdicts: pd.DataFrame | None = None) -> Report:
    """Per granularity and system: context-stage nDCG@10 against the best single retriever, with
    the published single-retriever numbers where they exist (whole documents)."""
    final = aggregate[(aggregate["stage"] == "context") & (aggregate["measure"] == "nDCG@10")]
    rows = []
    for granularity, part in final.groupby("granularity", sort=False):
        values = part.set_index("system")["mean"]
        best_single = values[list(singles)].max()
        for system, value in values.items():
            published = PUBLISHED_NDCG10.get(system) if granularity == "documents" else None
            rows.append({"claim": RRF_CLAIM if system not in singles else "published single-retriever nDCG@10",
                         "granularity": granularity, "system": system,
                         "paper": f"{published[0]} ({published[1]})" if published else "fused > best single",
                         "ours": round(float(value), 4), "vs best single": round(float(value - best_single), 4)})
    return Report("Hybrid search and reranking (SciFact, nDCG@10 of the final context)", pd.DataFrame(rows), note,
                  floatfmt=".4f", verdicts=verdicts)


def granularities(chunker: str, chunk_max_length: int | None) -> dict[str, tuple[str, int | None]]:
    """The two granularities the study compares, each with its chunker and the dense encoders'
    ``max_length`` (``None``: the encoder's own): whole documents, then ``chunker``'s chunks."""
    return {"documents": ("none", None), "256-token chunks": (chunker, chunk_max_length)}


def experiment_folder(granularity: str) -> str:
    """The folder of a granularity's experiment under ``results/hybrid_rerank/<profile>/``."""
    return granularity.replace(" ", "_")


def tested_tables(per_query: pd.DataFrame, singles: Sequence[str], reranker: str, n_resamples: int = 10_000,
                  seed: int = 0) -> dict[str, pd.DataFrame]:
    """The tables the claims are read from, by file name: every system against the best single
    retriever per granularity (``significance.csv``) and the verdicts of :func:`claims`."""
    significance = pd.concat(
        [significance_vs_best_single(part, singles, n_resamples=n_resamples, seed=seed).assign(granularity=g)
         for g, part in per_query.groupby("granularity", sort=False)], ignore_index=True)
    verdicts = verdict_table(per_query, claims(per_query, singles, f"reranker {reranker.split('/')[-1]}"),
                             n_resamples=n_resamples, seed=seed)
    return {"significance.csv": significance, "verdicts.csv": verdicts}


def derived_tables(folder: Path, load: Callable[[str], Dataset] | None = None) -> dict[str, pd.DataFrame]:
    """:func:`tested_tables` rebuilt from a run's stored per-query tables
    (``results/hybrid_rerank/<profile>/``) with the parameters its manifest records."""
    parameters = json.loads((folder / "manifest.json").read_text("utf-8"))["parameters"]
    names = [experiment_folder(g) for g in granularities(parameters["CHUNKER"], parameters["CHUNK_MAX_LENGTH"])]
    per_query = pd.concat([stored_per_query(folder / name) for name in names], ignore_index=True)
    singles = single_labels(stored_systems(folder / names[0]))
    return tested_tables(per_query, singles, parameters["RERANKER"], int(parameters["N_RESAMPLES"]),
                         int(parameters["SEED"]))
