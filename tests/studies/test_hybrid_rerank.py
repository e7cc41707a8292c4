"""Staged pipelines through the one engine on a toy BEIR set: every stage scored, runs saved and
read back, union recall by hand, sweeps, the reranker's ceiling."""

import pytest

from grainlab.chunking import get_chunker
from grainlab.data import load_dataset
from grainlab.errors import ConfigError
from grainlab.evaluation import evaluate_run
from grainlab.experiments import Stages, System, run_experiment
from grainlab.retrieval import BM25Retriever
from grainlab.retrieval.aggregate import collapse_to_documents
from grainlab.studies import hybrid_rerank as study

RETRIEVERS = {"bm25": "bm25", "bm25-robertson": "bm25(method=robertson,k1=0.9,b=0.4)"}


@pytest.fixture
def result(toy_mirror, cache, tmp_path):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    systems = study.systems(RETRIEVERS, "none", "documents", fusions=("rrf",),
                            reranker="cross-encoder/ms-marco-MiniLM-L-12-v2", candidate_k=4, rerank_k=3, context_k=2)
    return data, run_experiment(data, systems, study.MEASURES, name="hybrid", results_dir=tmp_path, cache=cache,
                                save_runs=True, n_resamples=200, progress=False)


def test_every_system_and_stage_is_scored(result):
    data, result = result
    stages = result.per_query.groupby("system")["stage"].unique().map(sorted).to_dict()
    assert stages["bm25"] == ["candidates", "context", "fused"]
    assert stages["bm25 → rerank"] == ["context", "reranked"]
    assert stages["rrf(bm25+bm25-robertson)"] == ["context", "fused"]
    assert set(result.per_query["qid"]) == set(data.qrels)
    assert result.per_query.query("system == 'bm25 → rerank'")["reranked"].all()  # tags are columns
    latency = study.latency(result, len(data.queries))
    assert set(latency["stage"]) >= {"fusion", "rerank", "context"} and (latency["ms_per_query"] >= 0).all()
    assert study.single_labels(result.systems) == ["bm25", "bm25-robertson"]


def test_saved_runs_score_as_the_tables_say(result, cache):
    data, result = result
    units = get_chunker("none").chunk_many(data.corpus.values())
    run = result.run("bm25", "candidates")
    reference = BM25Retriever(cache=cache).index(units).search(data.queries, k=4)
    assert run == reference  # lossless TREC round trip of the candidate list
    docs = collapse_to_documents(run, {u.chunk_id: u.doc_id for u in units})
    expected = evaluate_run(docs, data.qrels, ["nDCG@10"]).set_index("qid")["value"]
    table = result.per_query.query("system == 'bm25' and stage == 'candidates' and measure == 'nDCG@10'")
    assert table.set_index("qid")["value"].to_dict() == pytest.approx(expected.to_dict())
    with pytest.raises(ConfigError, match="no saved"):
        result.run("bm25", "reranked")


def test_union_recall_by_hand(toy_mirror):
    runs = {"a": {"q1": [("d1#0", 1.0)], "q3": [("d2#0", 1.0)]},
            "b": {"q1": [("d4#0", 1.0)], "q3": [("d5#0", 1.0)]}}
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    units = get_chunker("none").chunk_many(data.corpus.values())
    row = study.union_recall(runs, units, data.qrels, k=1).iloc[0]
    # relevant pairs: q1-d1, q2-d3, q3-d5 → a finds q1-d1, b finds q3-d5
    assert (row.relevant, row.both, row.only_a, row.only_b) == (3, 0, 1, 1)
    assert row.union_recall == pytest.approx(2 / 3)


def test_sweep_ceiling_significance_and_report(result):
    data, result = result
    units = get_chunker("none").chunk_many(data.corpus.values())
    candidates = {s: result.run(s, "candidates") for s in study.single_labels(result.systems)}
    sweep = study.fusion_sweep(candidates, units, data.qrels, rrf_ks=[1, 60], depths=[2, 4])
    assert len(sweep) == 2 * (2 * 2 + 2)
    ceiling = study.reranker_ceiling(result.run("rrf(bm25+bm25-robertson) → rerank", "reranked"), units, data.qrels)
    assert set(ceiling.columns) == {"qid", "relevant_in_window"} and len(ceiling) == 3
    sig = study.significance_vs_best_single(result.per_query, ["bm25", "bm25-robertson"], n_resamples=200)
    assert sig["baseline"].nunique() == 1 and sig["baseline"].iloc[0] in {"bm25", "bm25-robertson"}
    report = study.report(result.aggregate, ["bm25", "bm25-robertson"], "note")
    context = result.aggregate.query("stage == 'context' and measure == 'nDCG@10'").set_index("system")["mean"]
    rows = report.rows.set_index("system")
    assert rows.loc["rrf(bm25+bm25-robertson)", "vs best single"] == pytest.approx(
        context["rrf(bm25+bm25-robertson)"] - context[["bm25", "bm25-robertson"]].max(), abs=1e-4)


def test_stage_systems_are_checked():
    with pytest.raises(ConfigError, match="fusion"):
        System(("bm25", "bm25(k1=0.9)"), "none", "max")
    with pytest.raises(ConfigError, match="at least two"):
        System("bm25", "none", "max", stages=Stages(fusion="rrf"))
    with pytest.raises(ConfigError, match="context_k"):
        Stages(candidate_k=5, rerank_k=10)


def test_a_fusion_is_named_by_its_method_and_number_of_lists_in_a_figure():
    assert study.figure_name("rrf(BM25+all-MiniLM-L6-v2+bge-small-en-v1.5)") == "RRF (3 lists)"
    assert study.figure_name("minmax(BM25+bge-small-en-v1.5) → rerank") == "min-max (2 lists) → rerank"
    assert study.figure_name("bge-small-en-v1.5 → rerank") == "bge-small-en-v1.5 → rerank"
    assert study.figure_name("BM25") == "BM25"
