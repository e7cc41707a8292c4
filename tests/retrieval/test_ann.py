"""FAISS indexes: specs, exactness where they must be exact, the cache, and dense(index=...) end to end."""

import numpy as np
import pytest

from grainlab.cache import CorruptCacheWarning
from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.errors import ConfigError
from grainlab.retrieval import DenseRetriever, get_retriever, top_k
from grainlab.retrieval import ann as ann_module
from grainlab.retrieval.ann import IndexSpec, build_index, cached_index, search_index

pytest.importorskip("faiss")

MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def unit_vectors(n: int, dim: int, seed: int) -> np.ndarray:
    x = np.random.default_rng(seed).standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_specs_are_canonical_with_defaults_filled_in():
    assert IndexSpec.parse("flat").canonical == "flat"
    assert IndexSpec.parse("hnsw(efSearch=128)").canonical == "hnsw(M=32,efConstruction=40,efSearch=128)"
    spec = IndexSpec.parse("ivfpq(nlist=64,nprobe=8,m=8)")
    assert dict(spec.build) == {"nlist": 64, "m": 8, "nbits": 8} and dict(spec.search) == {"nprobe": 8}
    assert IndexSpec.parse(spec.canonical) == spec


@pytest.mark.parametrize("bad, message", [("annoy", "unknown vector index"), ("hnsw(ef=3)", "no parameter"),
                                          ("ivf(nlist=0)", "positive integer"), ("ivf(nlist=1.5)", "positive integer")])
def test_bad_specs_say_what_is_allowed(bad, message):
    with pytest.raises(ConfigError, match=message):
        IndexSpec.parse(bad)


def test_faiss_flat_equals_exact_search():
    """``flat`` through FAISS ranks exactly as the matrix product the default dense retriever uses."""
    docs, queries = unit_vectors(2000, 64, 0), unit_vectors(50, 64, 1)
    ids, scores = search_index(build_index(docs, IndexSpec.parse("flat")), queries, 20)
    expected_ids, expected_scores = top_k(queries @ docs.T, 20)
    np.testing.assert_allclose(scores, expected_scores, atol=1e-5)
    assert (ids == expected_ids).mean() > 0.999  # only exact float ties may swap


@pytest.mark.parametrize("spec", ["hnsw(M=16,efConstruction=200,efSearch=400)", "ivf(nlist=8,nprobe=8)"])
def test_exhaustive_settings_find_the_exact_neighbours(spec):
    docs, queries = unit_vectors(1000, 32, 2), unit_vectors(30, 32, 3)
    ids, _ = search_index(build_index(docs, IndexSpec.parse(spec)), queries, 10)
    expected, _ = top_k(queries @ docs.T, 10)
    assert np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ids, expected)]) >= 0.99


def test_ivf_with_more_lists_than_vectors_is_refused():
    with pytest.raises(ConfigError, match="nlist=64 is more than the 10 vectors"):
        build_index(unit_vectors(10, 8, 0), IndexSpec.parse("ivf(nlist=64)"))


def test_index_is_cached_and_a_corrupt_one_rebuilt(cache, monkeypatch):
    docs = unit_vectors(300, 16, 4)
    spec = IndexSpec.parse("hnsw(M=8)")
    first = cached_index(docs, spec, "vectors-a", cache)
    (saved,) = list((cache.root / "faiss").rglob("*.faiss"))

    def fail(*args, **kwargs):
        raise AssertionError("the index should come from the cache")

    monkeypatch.setattr(ann_module, "build_index", fail)
    again = cached_index(docs, IndexSpec.parse("hnsw(M=8,efSearch=200)"), "vectors-a", cache)  # search param: same file
    assert again.ntotal == first.ntotal == 300
    assert ann_module.faiss_module().downcast_index(again).hnsw.efSearch == 200
    monkeypatch.undo()
    saved.write_bytes(saved.read_bytes()[:100])
    with pytest.warns(CorruptCacheWarning):
        rebuilt = cached_index(docs, spec, "vectors-a", cache)
    assert rebuilt.ntotal == 300


def test_dense_spec_names_the_index_and_round_trips(cache):
    retriever = get_retriever(f"dense(model={MINILM},index=ivf(nlist=4))", cache=cache)
    assert retriever.spec == f"dense(model={MINILM},max_length=256,index=ivf(nlist=4,nprobe=16))"
    assert get_retriever(retriever.spec, cache=cache).spec == retriever.spec
    assert get_retriever(f"dense(model={MINILM},index=flat)", cache=cache).spec == f"dense(model={MINILM},max_length=256)"
    with pytest.raises(ConfigError, match="'index'"):
        get_retriever(f"dense(model={MINILM},indx=flat)", cache=cache)


@pytest.mark.parametrize("aggregate", [None, "max", "first", "mean"])
def test_exhaustive_ann_retrieval_equals_exact_retrieval(cache, aggregate):
    """With every list probed, IVF finds every unit, and document scores are rescored exactly:
    the run equals flat search's (units or documents, any aggregation)."""
    texts = ["Cats purr when content. Dogs bark at strangers. Birds sing at dawn.",
             "Qubits hold superpositions. Quantum gates rotate them. Measurement collapses the state.",
             "Rain feeds rivers. Rivers carve valleys over millions of years.",
             "Stocks fell on Monday. Bonds rallied as investors sought safety. The dollar was flat.",
             "Kittens play with string. Young cats sleep most of the day."]
    units = get_chunker("sentences(n=1)").chunk_many(Document(f"d{i}", t) for i, t in enumerate(texts))
    queries = {"q1": "young cats playing", "q2": "quantum computing", "q3": "financial markets"}
    exact = DenseRetriever(MINILM, cache=cache).index(units).search(queries, k=4, aggregate=aggregate)
    approx = DenseRetriever(MINILM, index_spec="ivf(nlist=4,nprobe=4)", cache=cache).index(units)
    run = approx.search(queries, k=4, aggregate=aggregate)
    for qid in queries:
        assert [i for i, _ in run[qid]] == [i for i, _ in exact[qid]]
        np.testing.assert_allclose([s for _, s in run[qid]], [s for _, s in exact[qid]], atol=1e-5)


def test_systems_name_the_index_only_when_it_is_approximate():
    from grainlab.experiments import System, retriever_label

    assert System(f"dense(model={MINILM},index=flat)").retriever == f"dense(model={MINILM})"
    assert retriever_label(f"dense(model={MINILM},index=flat)") == "all-MiniLM-L6-v2"
    hnsw = System(f"dense(model={MINILM},index=hnsw(M=8))")
    assert hnsw.retriever == f"dense(model={MINILM},index=hnsw(M=8,efConstruction=40,efSearch=64))"
    assert retriever_label(hnsw.retriever) == "all-MiniLM-L6-v2 hnsw(M=8,efConstruction=40,efSearch=64)"


def test_indexes_stay_on_the_cpu_without_gpu_faiss():
    from grainlab.retrieval.ann import on_device

    index = build_index(unit_vectors(50, 8, 0), IndexSpec.parse("ivf(nlist=2)"))
    assert on_device(index, IndexSpec.parse("ivf(nlist=2)"), "cpu") is index
    assert on_device(index, IndexSpec.parse("hnsw"), "cuda") is index  # no GPU HNSW in FAISS
