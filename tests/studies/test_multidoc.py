"""Distractors built from a pool: answer-free, never the question's own gold, most relevant first."""

import pytest

from grainlab.data import Dataset, Document
from grainlab.errors import ConfigError
from grainlab.studies.multidoc import build_multidoc_examples


def pool():
    docs = {
        "g1": Document("g1", "Paris is the capital and largest city of France.", "Paris"),
        "g2": Document("g2", "Lyon is a city in France on the Rhone.", "Lyon"),
        "g3": Document("g3", "France is a country whose capital is Paris.", "France"),
        "g4": Document("g4", "The capital city of Germany is Berlin.", "Berlin"),
        "g5": Document("g5", "Tea is brewed from leaves.", "Tea"),
    }
    queries = {f"q{i}": q for i, q in enumerate(["what is the capital of france", "which river flows through lyon",
                                                 "capital of germany", "what is tea made of", "big city in france"], 1)}
    qrels = {f"q{i}": {f"g{i}": 1} for i in range(1, 6)}
    answers = {"q1": ["Paris"], "q2": ["Rhone"], "q3": ["Berlin"], "q4": ["leaves"], "q5": ["Paris"]}
    return Dataset("toy_oracle", docs, queries, qrels, answers)


def test_distractors_are_answer_free_and_ranked(cache):
    examples = build_multidoc_examples(pool(), n_distractors=2, question_ids=["q1"], cache=cache)
    (example,) = examples
    titles = [t for t, _ in example.distractors]
    assert "Paris" not in titles and "France" not in titles  # own gold, and a passage holding the answer
    assert set(titles) == {"Lyon", "Berlin"}  # they share a query word; "Tea" shares none and ranks last
    assert example.gold == ("Paris", "Paris is the capital and largest city of France.")
    assert example.info["distractor_retriever"].startswith("bm25")
    with pytest.raises(ConfigError, match="answer-free"):
        build_multidoc_examples(pool(), n_distractors=4, question_ids=["q1"], cache=cache)
