import pytest

from grainlab.data import Dataset, Document, gold_clusters, stitch_documents
from grainlab.errors import MalformedData


def _dataset(qrels):
    corpus = {d: Document(d, f"text of {d}") for d in ("a", "b", "c")}
    return Dataset("toy", corpus, {q: f"question {q}" for q in qrels}, qrels, {})


def test_each_query_is_labelled_with_its_highest_graded_gold_document():
    clusters = gold_clusters(_dataset({"q1": {"b": 1, "a": 1}, "q2": {"a": 1, "c": 2}, "q3": {"c": 0, "b": 1}}))
    assert clusters == {"q1": "a", "q2": "c", "q3": "b"}


def test_a_query_without_a_positive_judgment_is_named():
    with pytest.raises(MalformedData, match="'q2'"):
        gold_clusters(_dataset({"q1": {"a": 1}, "q2": {"b": 0}}))


def test_stitched_documents_cluster_the_questions_they_hold():
    corpus = {f"p{i}": Document(f"p{i}", f"passage {i} says answer{i}.") for i in range(6)}
    data = Dataset("toy", corpus, {f"q{i}": f"q {i}" for i in range(6)}, {f"q{i}": {f"p{i}": 1} for i in range(6)},
                   {f"q{i}": [f"answer{i}"] for i in range(6)})
    stitched = stitch_documents(data, min_chars=60)  # ~24 characters a passage: three per document
    clusters = gold_clusters(stitched)
    assert len(clusters) == 6 and len(set(clusters.values())) == 2
    assert clusters["q0"] == clusters["q2"] != clusters["q3"]
