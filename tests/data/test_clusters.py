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


def test_questions_whose_gold_spans_overlap_share_an_evidence_cluster():
    from grainlab.data import evidence_clusters

    corpus = {"a": Document("a", "x" * 100), "b": Document("b", "y" * 100)}
    spans = {"q1": [("a", 0, 10)], "q2": [("a", 5, 15)], "q3": [("a", 14, 20)],  # a chain: one cluster
             "q4": [("a", 30, 40)], "q5": [("a", 50, 60), ("a", 35, 36)],  # joined through its second span
             "q6": [("a", 20, 25)],  # touches q3's end but does not overlap it
             "q7": [("b", 0, 10)]}  # same offsets, another document
    data = Dataset("d", corpus, {q: q for q in spans}, {q: {s[0][0]: 1} for q, s in spans.items()},
                   info={"gold_spans": spans})
    clusters = evidence_clusters(data)
    assert clusters == {"q1": "a:0", "q2": "a:0", "q3": "a:0", "q4": "a:30", "q5": "a:30", "q6": "a:20", "q7": "b:0"}
    with pytest.raises(MalformedData, match="q1"):
        evidence_clusters(Dataset("d", corpus, {"q1": "?"}, {"q1": {"a": 1}}))
