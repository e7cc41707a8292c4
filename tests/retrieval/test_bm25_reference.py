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


JA_TEXTS = [
    "チャンクサイズは検索精度に影響します。",
    "ハイブリッド検索ではBM25と密ベクトル検索をRRFで統合します。",
    "リランカーは候補の順位を並べ替えます。",
    "規程の例外条件を一緒に取得したい場合は大きなチャンクが有利です。",
    "型番を含む一行だけを探すなら小さなチャンクで十分です。",
]
JA_QUERIES = ["チャンクサイズと検索精度", "リランカーの順位", "BM25とRRF"]


def ja_units():
    return get_chunker("none").chunk_many(Document(f"j{i}", t) for i, t in enumerate(JA_TEXTS))


def test_japanese_bm25_reads_morphemes_and_matches_the_formula(cache):
    """Japanese has no spaces: the ``ja`` analyzer's morphemes make queries match, and the scores
    over them equal the Lucene formula computed independently on the same tokens."""
    k1, b = 1.5, 0.75
    retriever = BM25Retriever(k1=k1, b=b, language="ja", cache=cache).index(ja_units())
    docs = retriever.tokenize(JA_TEXTS)
    assert "チャンク" in docs[0] and "は" not in docs[0] and "。" not in docs[0]  # particles, symbols dropped
    n, avgdl = len(docs), sum(map(len, docs)) / len(docs)
    ours = retriever.score(JA_QUERIES)
    for row, query in enumerate(retriever.tokenize(JA_QUERIES)):
        expected = []
        for doc in docs:
            score = 0.0
            for term in query:
                df, tf = sum(term in d for d in docs), doc.count(term)
                if df and tf:
                    score += math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf * (k1 + 1) / (
                        tf + k1 * (1 - b + b * len(doc) / avgdl))
            expected.append(score)
        assert np.allclose(ours[row] * (k1 + 1), expected, atol=1e-5)
    assert [int(np.argmax(r)) for r in ours] == [0, 2, 1]
    english = BM25Retriever(cache=cache).index(ja_units()).score(JA_QUERIES)
    assert (english > 0).sum() < (ours > 0).sum()  # whitespace tokens of Japanese match (almost) nothing


def test_japanese_bm25_names_its_language_and_dictionary(cache):
    from importlib import metadata

    from grainlab.experiments.identity import results_key
    from grainlab.retrieval import get_retriever

    retriever = get_retriever("bm25(language=ja)", cache=cache)
    assert retriever.spec == "bm25(k1=1.5,b=0.75,method=lucene,language=ja)"
    assert retriever.record == {"language": "ja", "fugashi": metadata.version("fugashi"),
                                "unidic-lite": metadata.version("unidic-lite")}
    assert get_retriever("bm25", cache=cache).spec == "bm25(k1=1.5,b=0.75,method=lucene)"
    from grainlab.experiments import System

    assert results_key("f", System("bm25(language=ja)", "none"), ["nDCG@10"], 10) != \
        results_key("f", System("bm25", "none"), ["nDCG@10"], 10)
    with pytest.raises(Exception, match="language must be one of"):
        get_retriever("bm25(language=fr)", cache=cache)


def test_the_japanese_analyzer_keeps_content_morphemes_and_drops_particles_and_auxiliaries():
    """UniDic parts of speech: 助詞 (particles: は, を, に) and 助動詞 (auxiliary verbs: ます, た,
    です) carry no topic and are dropped, as are punctuation and spaces; nouns and verb stems stay."""
    from grainlab.retrieval.analyzers import japanese_tokens

    tokens = japanese_tokens("私は東京に行きました。サーバーです")
    assert {"東京", "行き", "サーバー"} <= set(tokens)
    assert not {"は", "に", "まし", "た", "です", "。"} & set(tokens)
