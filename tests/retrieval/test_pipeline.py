"""The staged pipeline: k constraints, fusion, context selection rules, traces and lineage."""

import pytest

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.errors import ConfigError
from grainlab.retrieval import BM25Retriever, Pipeline, UnitGroups

DOCS = [
    Document("solar", "Solar panels convert sunlight into electricity. Solar cells use silicon. "
                      "Solar farms cover fields with panels that make electricity."),
    Document("wind", "Wind turbines make electricity from moving air."),
    Document("tea", "Tea is brewed from leaves. Green tea and black tea differ in oxidation."),
]


@pytest.fixture
def setup(cache):
    chunker = get_chunker("sentences(n=1)")
    units = chunker.chunk_many(DOCS)
    bm25 = BM25Retriever(cache=cache).index(units)
    lucene_like = BM25Retriever(k1=0.9, b=0.4, cache=cache).index(units)
    return chunker, units, bm25, lucene_like


def test_k_constraints_are_checked(setup):
    chunker, units, bm25, _ = setup
    for ks in [(10, 5, 6), (3, 5, 2), (10, 5, 0)]:
        with pytest.raises(ConfigError, match="context_k ≤ rerank_k ≤ candidate_k"):
            Pipeline([bm25], units, candidate_k=ks[0], rerank_k=ks[1], context_k=ks[2], fusion=None)
    with pytest.raises(ConfigError, match="fusion"):
        Pipeline([bm25, bm25], units, fusion=None)


def test_parent_dedup_budget_and_trace(setup):
    chunker, units, bm25, lucene_like = setup
    pipeline = Pipeline([bm25, lucene_like], units, chunker=chunker.spec, fusion="rrf",
                        candidate_k=8, rerank_k=6, context_k=2)
    stages, traces = pipeline.run({"q": "solar electricity panels"})
    trace = traces["q"]
    assert set(trace.candidates) == {bm25.spec, lucene_like.spec}
    assert [r for _, r, _ in trace.fused] == list(range(1, len(trace.fused) + 1))
    parents = [hit.doc_id for hit in trace.context]
    assert len(parents) == len(set(parents)) == 2
    assert parents[0] == "solar"
    reasons = " ".join(trace.excluded.values())
    assert "already in context via solar#" in reasons
    hit = trace.context[0]
    assert hit.chunker == chunker.spec and hit.retrievers == (bm25.spec, lucene_like.spec)
    unit = next(u for u in units if u.chunk_id == hit.unit_id)
    assert (hit.start, hit.end, hit.parent_id) == (unit.start, unit.end, "solar")
    assert set(stages) == {f"candidates:{bm25.spec}", f"candidates:{lucene_like.spec}", "fused", "reranked",
                           "context"}
    assert {"fusion", "rerank", "context"} <= set(pipeline.timings)


def test_token_budget_excludes_with_reason(setup):
    chunker, units, bm25, _ = setup
    pipeline = Pipeline([bm25], units, fusion=None, candidate_k=8, rerank_k=8, context_k=5,
                        token_budget=12, dedupe_parents=False)
    trace = pipeline.run({"q": "solar electricity panels"})[1]["q"]
    assert sum(next(u for u in units if u.chunk_id == h.unit_id).n_tokens for h in trace.context) <= 12
    assert any(reason.startswith("over token budget") for reason in trace.excluded.values())


def test_parent_child_grouping():
    from grainlab.chunking.base import Chunk

    units = [Chunk("d#0", "d", "x", 0, 1, 1, 0, parent_id="d/sec1"),
             Chunk("d#1", "d", "y", 1, 2, 1, 1, parent_id="d/sec1"),
             Chunk("d#2", "d", "z", 2, 3, 1, 2, parent_id="d/sec2")]
    assert UnitGroups.from_units(units, by="parent").doc_ids == ["d/sec1", "d/sec2"]
    assert UnitGroups.from_units(units).doc_ids == ["d"]
    with pytest.raises(ConfigError):
        UnitGroups.from_units(units, by="section")


@pytest.mark.parametrize("rrf_k", [1, 60])
def test_the_fused_stage_is_rrf_with_the_pipelines_own_k(setup, rrf_k):
    """The fused run equals ``fusion.rrf`` of the candidate runs with the pipeline's ``rrf_k`` (a
    pipeline that ignored it would agree with k = 60 only), and ranks differ between k = 1 and 60."""
    from grainlab.retrieval import rrf

    chunker, units, bm25, lucene_like = setup
    queries = {"q": "solar electricity panels", "r": "green tea leaves"}
    pipeline = Pipeline([bm25, lucene_like], units, chunker=chunker.spec, fusion="rrf", rrf_k=rrf_k,
                        candidate_k=8, rerank_k=6, context_k=2)
    stages, _ = pipeline.run(queries)
    candidates = [stages[f"candidates:{r.spec}"] for r in (bm25, lucene_like)]
    expected = rrf(candidates, k=rrf_k, depth=8)
    for qid in queries:
        assert [(d, pytest.approx(s)) for d, s in stages["fused"][qid]] == expected[qid]
