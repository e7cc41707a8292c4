"""Stage-by-stage diagnostics of candidates → fusion → rerank → context on a judged dataset.

Every stage's unit run is collapsed to documents (best unit first) and scored with
ir-measures against the document qrels; the tables are tidy (one row per query × system ×
stage × measure) so every figure and table can be drawn from them.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from grainlab.data.types import Dataset
from grainlab.evaluation.measures import evaluate_run
from grainlab.evaluation.significance import compare_to_baseline
from grainlab.retrieval.aggregate import collapse_to_documents
from grainlab.retrieval.base import Retriever, Run
from grainlab.retrieval.fusion import rrf, score_fusion
from grainlab.retrieval.pipeline import Pipeline, Trace
from grainlab.retrieval.rerank import Reranker
from grainlab.types import Chunk


@dataclass
class StudyResult:
    per_query: pd.DataFrame
    aggregate: pd.DataFrame
    latency: pd.DataFrame
    traces: dict[str, dict[str, Trace]] = field(default_factory=dict)


def _relevant(qrels: Mapping[str, Mapping[str, int]]) -> dict[str, set[str]]:
    return {q: {d for d, r in docs.items() if r > 0} for q, docs in qrels.items()}


def evaluate_stage(run: Run, units_by_id: Mapping[str, Chunk], qrels, measures: Sequence[str]) -> pd.DataFrame:
    """ir-measures on a unit run collapsed to documents."""
    docs = collapse_to_documents(run, {uid: u.doc_id for uid, u in units_by_id.items()})
    return evaluate_run(docs, qrels, measures)


def run_pipeline_study(dataset: Dataset, granularity: str, units: Sequence[Chunk],
                       retrievers: Mapping[str, Retriever], fusions: Sequence[str] = ("rrf", "minmax"),
                       reranker: Reranker | None = None, candidate_k: int = 100, rerank_k: int = 20,
                       context_k: int = 5, rrf_k: float = 60, chunker: str = "none",
                       measures: Sequence[str] = ("nDCG@10", "RR@10", "R@5", "R@20", "R@100")) -> StudyResult:
    """Each single retriever and each fusion of all of them, with and without the reranker."""
    by_id = {u.chunk_id: u for u in units}
    configs: list[tuple[str, list[Retriever], str | None]] = [(label, [r], None) for label, r in retrievers.items()]
    fused_label = "+".join(retrievers)
    configs += [(f"{fusion}({fused_label})", list(retrievers.values()), fusion) for fusion in fusions]
    frames, latency, traces = [], [], {}
    for label, members, fusion in configs:
        for rerank in ([None, reranker] if reranker is not None else [None]):
            name = label + (" → rerank" if rerank else "")
            pipeline = Pipeline(members, units, chunker=chunker, fusion=fusion, rrf_k=rrf_k, reranker=rerank,
                                candidate_k=candidate_k, rerank_k=rerank_k, context_k=context_k)
            stages, traces[name] = pipeline.run(dataset.queries)
            for stage_name, run in stages.items():
                stage = stage_name.split(":")[0]
                skip = ((stage == "candidates" and fusion is not None)  # singles report candidates
                        or (stage == "reranked" and rerank is None)
                        or (stage in ("candidates", "fused") and rerank is not None))  # same as without
                if skip:
                    continue
                table = evaluate_stage(run, by_id, dataset.qrels, measures)
                table.insert(0, "stage", stage)
                table.insert(0, "system", name)
                frames.append(table)
            latency += [{"system": name, "stage": stage, "ms_per_query": 1000 * seconds / len(dataset.queries)}
                        for stage, seconds in pipeline.timings.items()]
    per_query = pd.concat(frames, ignore_index=True)
    per_query.insert(0, "granularity", granularity)
    per_query.insert(0, "dataset", dataset.name)
    aggregate = (per_query.groupby(["dataset", "granularity", "system", "stage", "measure"], sort=False)["value"]
                 .mean().reset_index())
    lat = pd.DataFrame(latency)
    lat.insert(0, "granularity", granularity)
    return StudyResult(per_query, aggregate, lat, traces)


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


def fusion_sweep(candidate_runs: Mapping[str, Run], units: Sequence[Chunk], qrels, rrf_ks: Sequence[float],
                 depths: Sequence[int], measures: Sequence[str] = ("nDCG@10", "R@100")) -> pd.DataFrame:
    """RRF over the candidate lists for each constant ``k`` and each candidate depth."""
    by_id = {u.chunk_id: u for u in units}
    rows = []
    for depth in depths:
        cut = [{q: r[:depth] for q, r in run.items()} for run in candidate_runs.values()]
        for k in rrf_ks:
            table = evaluate_stage(rrf(cut, k=k), by_id, qrels, measures)
            for measure, value in table.groupby("measure")["value"].mean().items():
                rows.append({"rrf_k": k, "candidate_depth": depth, "measure": measure, "value": value})
        minmax = evaluate_stage(score_fusion(cut, "minmax"), by_id, qrels, measures)
        for measure, value in minmax.groupby("measure")["value"].mean().items():
            rows.append({"rrf_k": None, "candidate_depth": depth, "measure": f"minmax {measure}", "value": value})
    return pd.DataFrame(rows)


def reranker_ceiling(traces: Mapping[str, Trace], units: Sequence[Chunk], qrels, rerank_k: int) -> pd.DataFrame:
    """Per query: whether any relevant document is inside the reranker's window at all."""
    unit_doc = {u.chunk_id: u.doc_id for u in units}
    relevant = _relevant(qrels)
    rows = []
    for qid, trace in traces.items():
        window = {unit_doc[uid] for uid, _, _ in trace.fused[:rerank_k]}
        rows.append({"qid": qid, "relevant_in_window": bool(relevant.get(qid, set()) & window)})
    return pd.DataFrame(rows)


def significance_vs_best_single(per_query: pd.DataFrame, singles: Sequence[str], measure: str = "nDCG@10",
                                stage: str = "context", n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Every system at ``stage`` against the best single retriever (Holm-corrected)."""
    data = per_query[(per_query["stage"] == stage) & (per_query["measure"] == measure)]
    means = data.groupby("system")["value"].mean()
    best = means[list(singles)].idxmax()
    return compare_to_baseline(data, best, measure, n_resamples=n_resamples, seed=seed)
