"""LongRAG corpora: passages, title documents and groups keep every question and its gold text."""

from grainlab.data import Dataset, Document
from grainlab.experiments.longrag import (
    document_corpus,
    grouped_corpus,
    merge_sources,
    passage_corpus,
    similarity_neighbours,
)


def sources():
    nq = Dataset("nq", {"p1": Document("p1", "Paris is the capital of France. " * 30, "Paris"),
                        "p2": Document("p2", "The Louvre is a museum in Paris.", "Paris"),
                        "p3": Document("p3", "Berlin is the capital of Germany.", "Berlin")},
                 {"q1": "capital of germany"}, {"q1": {"p3": 1}}, {"q1": ["Berlin"]})
    other = Dataset("squad", {"s1": Document("s1", "Rome is the capital of Italy.", "Rome")}, {}, {}, {})
    return merge_sources("wiki", [nq, other], nq)


def test_units_keep_text_and_gold(cache):
    pool = sources()
    assert set(pool.corpus) == {"nq:p1", "nq:p2", "nq:p3", "squad:s1"} and pool.qrels == {"q1": {"nq:p3": 1}}
    passages = passage_corpus(pool, words=100)
    assert all(len(d.text.split()) <= 149 for d in passages.corpus.values())
    assert passages.qrels["q1"] == {"nq:p3#0": 1}
    documents = document_corpus(pool)
    assert set(documents.corpus) == {"Paris", "Berlin", "Rome"}
    assert documents.corpus["Paris"].text.endswith("The Louvre is a museum in Paris.")
    assert documents.qrels["q1"] == {"Berlin": 1}
    neighbours = similarity_neighbours(documents, k=1, cache=cache)
    assert all(len(v) == 1 and k not in v for k, v in neighbours.items())
    grouped = grouped_corpus(documents, neighbours, max_tokens=4000)
    texts = "\n\n".join(d.text for d in grouped.corpus.values())
    assert all(doc.text in texts for doc in documents.corpus.values())  # nothing lost
    assert len(grouped.corpus) < len(documents.corpus)
    (gold,) = grouped.qrels["q1"]
    assert "Berlin is the capital of Germany." in grouped.corpus[gold].text
