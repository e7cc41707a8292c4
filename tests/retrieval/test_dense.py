"""Dense retrieval against sentence-transformers and brute-force numpy."""

import numpy as np
import pytest

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.retrieval import DenseRetriever

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
TEXTS = ["A cat chased a mouse across the kitchen floor.", "Quantum computers use qubits.",
         "Plants need water and light to grow.", "The stock market fell sharply.",
         "Kittens are young cats that love to play. " * 30]


@pytest.fixture(scope="module")
def reference_model():
    from sentence_transformers import SentenceTransformer

    from grainlab.models import resolve_model

    return SentenceTransformer(str(resolve_model(MINILM).path), device="cpu")


def test_embeddings_match_sentence_transformers(reference_model, cache):
    retriever = DenseRetriever(MINILM, cache=cache)
    ours = retriever.encoder.encode_passages(TEXTS)
    theirs = reference_model.encode(TEXTS, normalize_embeddings=True)
    assert np.abs(ours - theirs).max() < 1e-5
    assert retriever.encoder.config.max_length == reference_model.max_seq_length == 256


def test_search_equals_brute_force_and_uses_the_cache(reference_model, cache, monkeypatch):
    units = get_chunker("none").chunk_many(Document(f"d{i}", t) for i, t in enumerate(TEXTS))
    retriever = DenseRetriever(MINILM, cache=cache).index(units)
    queries = {"q1": "young cats playing", "q2": "qubits"}
    run = retriever.search(queries, k=5)
    q = reference_model.encode(list(queries.values()), normalize_embeddings=True)
    d = reference_model.encode(TEXTS, normalize_embeddings=True)
    expected = np.argsort(-(q @ d.T), axis=1)
    for row, qid in enumerate(queries):
        assert [u for u, _ in run[qid]] == [f"d{i}#0" for i in expected[row]]

    def fail(*args, **kwargs):
        raise AssertionError("embeddings should come from the cache")

    again = DenseRetriever(MINILM, cache=cache)
    monkeypatch.setattr(again.encoder, "encode", fail)
    assert again.index(units).search(queries, k=5) == run


def test_spec_names_model_and_length(cache):
    assert DenseRetriever(MINILM, max_length=512, cache=cache).spec == \
        f"dense(model={MINILM},max_length=512)"
