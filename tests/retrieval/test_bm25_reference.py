"""Our bm25s wrapper against rank_bm25 and against the Lucene formula computed by hand.

bm25s drops the constant (k1 + 1) factor of the term-frequency component (it does not
change any ranking), so reference scores are compared with ours × (k1 + 1).
"""

import math

import numpy as np
import pytest
from rank_bm25 import BM25Okapi

from grainlab.chunking import get_chunker
from grainlab.data import Document
from grainlab.retrieval import BM25Retriever

TEXTS = [
    "The cat sat on the mat while the dog slept.",
    "Dogs and cats are common household pets.",
    "Quantum computers use qubits to compute.",
    "The stock market fell sharply on Monday.",
    "A cat chased a mouse across the kitchen floor.",
    "Photosynthesis converts light into chemical energy in plants.",
    "Plants need water, light and carbon dioxide.",
    "The mouse ate the cheese in the kitchen.",
]
QUERIES = ["cat in the kitchen", "plants light energy", "quantum qubits", "household dogs"]


def units():
    return get_chunker("none").chunk_many(Document(f"d{i}", t) for i, t in enumerate(TEXTS))


def test_robertson_matches_rank_bm25_okapi(cache):
    retriever = BM25Retriever(method="robertson", k1=1.2, b=0.75, cache=cache).index(units())
    reference = BM25Okapi(retriever.tokenize(TEXTS), k1=1.2, b=0.75)
    ours = retriever.score(QUERIES)
    for row, tokens in enumerate(retriever.tokenize(QUERIES)):
        assert np.allclose(ours[row] * (1.2 + 1), reference.get_scores(tokens), atol=1e-5)


def test_lucene_matches_the_formula(cache):
    k1, b = 1.5, 0.75
    retriever = BM25Retriever(k1=k1, b=b, cache=cache).index(units())
    docs = retriever.tokenize(TEXTS)
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    ours = retriever.score(QUERIES)
    for row, query in enumerate(retriever.tokenize(QUERIES)):
        expected = []
        for doc in docs:
            score = 0.0
            for term in query:
                df = sum(term in d for d in docs)
                tf = doc.count(term)
                if df and tf:
                    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
                    score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
            expected.append(score)
        assert np.allclose(ours[row] * (k1 + 1), expected, atol=1e-5)


def test_index_is_cached_and_reloaded(cache):
    first = BM25Retriever(cache=cache).index(units()).score(QUERIES)
    folders = list((cache.root / "bm25").glob("*/*"))
    assert len(folders) == 1
    second = BM25Retriever(cache=cache).index(units()).score(QUERIES)
    assert np.array_equal(first, second)
    assert len(list((cache.root / "bm25").glob("*/*"))) == 1
    BM25Retriever(k1=0.9, cache=cache).index(units())
    assert len(list((cache.root / "bm25").glob("*/*"))) == 2


def test_search_ranks_and_aggregates(cache):
    retriever = BM25Retriever(cache=cache).index(units())
    run = retriever.search({"q": "cat kitchen mouse"}, k=3)
    assert run["q"][0][0] in {"d4#0", "d7#0"}
    assert [s for _, s in run["q"]] == sorted((s for _, s in run["q"]), reverse=True)
    docs = retriever.search({"q": "cat kitchen mouse"}, k=3, aggregate="max")
    assert [d for d, _ in docs["q"]] == [u.split("#")[0] for u, _ in run["q"]]


def test_query_without_known_terms_scores_zero(cache):
    retriever = BM25Retriever(cache=cache).index(units())
    assert not retriever.score(["zzzz qqqq"]).any()
    assert retriever.score(["the a of"]).sum() == pytest.approx(0.0)
