"""Stage-by-stage study on a toy BEIR set: tables, union recall by hand, sweeps, ceiling."""

import pytest

from grainlab.chunking import get_chunker
from grainlab.data import load_dataset
from grainlab.experiments.pipeline_study import (
    fusion_sweep,
    reranker_ceiling,
    run_pipeline_study,
    significance_vs_best_single,
    union_recall,
)
from grainlab.retrieval import BM25Retriever, Reranker


@pytest.fixture
def study(toy_mirror, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    units = get_chunker("none").chunk_many(data.corpus.values())
    retrievers = {"bm25": BM25Retriever(cache=cache).index(units),
                  "bm25-robertson": BM25Retriever(method="robertson", k1=0.9, b=0.4, cache=cache).index(units)}
    result = run_pipeline_study(data, "documents", units, retrievers, reranker=Reranker(cache=cache),
                                candidate_k=4, rerank_k=3, context_k=2)
    return data, units, retrievers, result


def test_tables_cover_every_system_and_stage(study):
    data, _, _, result = study
    stages = result.per_query.groupby("system")["stage"].unique().map(sorted).to_dict()
    assert stages["bm25"] == ["candidates", "context", "fused"]
    assert stages["bm25 → rerank"] == ["context", "reranked"]
    assert stages["rrf(bm25+bm25-robertson)"] == ["context", "fused"]
    assert set(result.per_query["qid"]) == set(data.qrels)
    assert set(result.latency["stage"]) >= {"fusion", "rerank", "context"}
    assert (result.latency["ms_per_query"] >= 0).all()


def test_union_recall_by_hand(toy_mirror):
    runs = {"a": {"q1": [("d1#0", 1.0)], "q3": [("d2#0", 1.0)]},
            "b": {"q1": [("d4#0", 1.0)], "q3": [("d5#0", 1.0)]}}
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    units = get_chunker("none").chunk_many(data.corpus.values())
    row = union_recall(runs, units, data.qrels, k=1).iloc[0]
    # relevant pairs: q1-d1, q2-d3, q3-d5 → a finds q1-d1, b finds q3-d5
    assert (row.relevant, row.both, row.only_a, row.only_b) == (3, 0, 1, 1)
    assert row.union_recall == pytest.approx(2 / 3)


def test_sweep_ceiling_and_significance(study):
    data, units, retrievers, result = study
    candidates = {name: r.search(data.queries, k=4) for name, r in retrievers.items()}
    sweep = fusion_sweep(candidates, units, data.qrels, rrf_ks=[1, 60], depths=[2, 4])
    assert len(sweep) == 2 * (2 * 2 + 2)
    ceiling = reranker_ceiling(result.traces["rrf(bm25+bm25-robertson) → rerank"], units, data.qrels, 3)
    assert set(ceiling.columns) == {"qid", "relevant_in_window"} and len(ceiling) == 3
    sig = significance_vs_best_single(result.per_query, ["bm25", "bm25-robertson"], n_resamples=200)
    assert sig["baseline"].nunique() == 1 and sig["baseline"].iloc[0] in {"bm25", "bm25-robertson"}
