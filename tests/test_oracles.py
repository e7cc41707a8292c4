"""Independent oracles where the code used to check itself: exact enumeration, the official
scripts' logic transcribed, worked examples, and stub readers that observe what the pipeline feeds."""

from __future__ import annotations

import itertools
import re
import string

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grainlab.chunking.base import Chunk
from grainlab.chunking.grouping import group_documents, symmetric
from grainlab.data.lost_in_the_middle import MultiDocExample
from grainlab.data.types import Dataset, Document
from grainlab.evaluation.answers import best_subspan_em
from grainlab.evaluation.significance import randomization_test
from grainlab.evaluation.spans import boundary_retention, covers, span_coverage, span_scores
from grainlab.retrieval import collapse_to_documents, get_retriever
from grainlab.studies.lost_in_the_middle import accuracy_by_position, qa_position_runs
from tests.scripted_reader import ScriptedReader


# -- paired randomization test: exact sign-flip enumeration ------------------------------------
def exact_sign_flip_p(a: np.ndarray, b: np.ndarray) -> float:
    diff = a - b
    observed = abs(diff.mean())
    flips = [abs((diff * np.array(signs)).mean()) for signs in itertools.product((1, -1), repeat=len(diff))]
    return float(np.mean([f >= observed - 1e-12 for f in flips]))


@pytest.mark.parametrize("n, seed", [(5, 0), (8, 1), (10, 2), (12, 3)])
def test_randomization_test_equals_exact_enumeration(n, seed):
    rng = np.random.default_rng(seed)
    a, b = rng.random(n), rng.random(n)
    assert randomization_test(a, b, n_resamples=10_000) == pytest.approx(exact_sign_flip_p(a, b), abs=1e-9)


def test_randomization_test_samples_close_to_exact_for_larger_n():
    rng = np.random.default_rng(7)
    a, b = rng.random(15), rng.random(15) + 0.15
    assert randomization_test(a, b, n_resamples=20_000) == pytest.approx(exact_sign_flip_p(a, b), abs=0.01)


# -- best_subspan_em: Liu et al.'s metric, transcribed from their evaluation code -------------------
def official_normalize(text: str) -> str:
    text = text.lower()
    text = "".join(ch for ch in text if ch not in set(string.punctuation))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    return " ".join(text.split())


def official_best_subspan_em(prediction: str, answers: list[str]) -> float:
    prediction = prediction.split("\n")[0].strip()  # their evaluation script keeps the first line
    normalized = official_normalize(prediction)
    return float(any(official_normalize(a).lower() in normalized.lower() for a in answers))


@pytest.mark.parametrize("prediction, answers, expected", [
    ("The Eiffel Tower.", ["Eiffel tower"], 1.0),          # case, article, punctuation
    ("It is   in\tParis!", ["paris"], 1.0),                # whitespace
    ("U.S.A", ["USA"], 1.0),                               # punctuation inside the answer
    ("an apple a day", ["The apple"], 1.0),                 # articles on both sides
    ("Titanic", ["tan"], 1.0),                              # a substring, not a token match (as the paper scores)
    ("Anthem", ["them"], 1.0),                              # "an" inside a word is not an article
    ("nothing here\nParis", ["Paris"], 0.0),                # only the first line counts
    ("", ["Paris"], 0.0),
    ("1,000 people", ["1000"], 1.0),
])
def test_best_subspan_em_official_cases(prediction, answers, expected):
    assert best_subspan_em(prediction, answers) == official_best_subspan_em(prediction, answers) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aAnthe .,!-'\n\tPxyz")), max_size=40),
       st.lists(st.text(alphabet=st.sampled_from(list("aAnthe .,-Pxyz")), max_size=12), min_size=1, max_size=3))
def test_best_subspan_em_equals_the_official_code(prediction, answers):
    assert best_subspan_em(prediction, answers) == official_best_subspan_em(prediction, answers)


# -- LongRAG grouping: the official group_documents.py logic ------------------------------------------
def official_grouping(sizes: dict[str, int], adjacency: dict[str, set[str]], max_size: int) -> list[list[str]]:
    """preprocess/group_documents.py (TIGER-AI-Lab/LongRAG), one size band, nodes of degree 0 kept alone."""
    group_size, group_title, group_of = {}, {}, {}
    gid = 0
    for node in sorted(sizes, key=lambda n: len(adjacency[n])):  # stable: input order among equal degrees
        neighbours = {}
        for other in adjacency[node]:
            if other in group_of:
                neighbours[group_of[other]] = group_size[group_of[other]]
        cluster, size = {node}, sizes[node]
        for g in sorted(neighbours, key=lambda g: neighbours[g]):
            if group_size[g] > max_size - size:
                break
            cluster |= group_title[g]
            size += group_size[g]
        gid += 1
        group_size[gid], group_title[gid] = size, cluster
        for member in cluster:
            group_of[member] = gid
    live = {group_of[n] for n in sizes}
    order = {n: i for i, n in enumerate(sizes)}
    return sorted((sorted(group_title[g], key=order.get) for g in live), key=lambda g: order[g[0]])


def test_grouping_a_misfit_neighbour_before_one_that_fits():
    # the hub's neighbour groups, in the order the hub lists them: 'big' (misfit) first, then 'small'
    sizes = {"big": 3500, "small": 300, "hub": 400}
    adjacency = symmetric({"hub": ["big", "small"]})
    expected = [["big"], ["small", "hub"]]  # smallest first: small merges, big would exceed 4000 − 700
    assert group_documents(sizes, adjacency, max_size=4000) == official_grouping(sizes, adjacency, 4000) == expected


@settings(max_examples=120, deadline=None)
@given(st.lists(st.integers(1, 2500), min_size=2, max_size=9, unique=True),
       st.lists(st.tuples(st.integers(0, 8), st.integers(0, 8)), max_size=20))
def test_grouping_equals_the_official_logic(size_list, edges):
    names = [f"n{i}" for i in range(len(size_list))]
    sizes = dict(zip(names, size_list))  # distinct sizes: the official sort has no ties to break
    neighbours = {n: [names[b] for a, b in edges if a < len(names) and b < len(names) and names[a] == n]
                  for n in names}
    adjacency = symmetric(neighbours)
    assert group_documents(sizes, adjacency, 3000) == official_grouping(sizes, adjacency, 3000)


# -- spans on chunk edges, aggregation with several units per document ---------------------------------
class _Piece:
    def __init__(self, doc_id, start, end, parent_id=None):
        self.doc_id, self.start, self.end, self.parent_id = doc_id, start, end, parent_id


def test_gold_spans_ending_exactly_on_chunk_edges():
    chunks = [_Piece("d", 0, 10), _Piece("d", 10, 20)]
    assert covers(chunks[0], ("d", 0, 10)) and covers(chunks[1], ("d", 10, 20))  # edges are inclusive
    assert not covers(chunks[0], ("d", 5, 11)) and span_coverage(chunks, ("d", 5, 11)) == "partial"
    assert span_coverage(chunks[:1], ("d", 10, 12)) == "none"  # touching the end is not overlapping
    assert boundary_retention(chunks, [("d", 0, 10), ("d", 10, 20), ("d", 9, 11)]) == pytest.approx(2 / 3)
    overlap = span_scores(chunks[:1], [("d", 0, 10)])
    assert overlap["recall"] == pytest.approx(1.0) and overlap["precision"] == pytest.approx(1.0)


def test_collapse_to_documents_with_several_units_per_document():
    run = {"q": [("a#2", 0.9), ("b#0", 0.8), ("a#0", 0.7), ("c#1", 0.6), ("b#3", 0.5)]}
    unit_doc = {u: u.split("#")[0] for u, _ in run["q"]}
    frame = pd.DataFrame(run["q"], columns=["unit", "score"]).assign(doc=lambda f: f["unit"].map(unit_doc))
    best = frame.groupby("doc", sort=False)["score"].max().sort_values(ascending=False)
    assert collapse_to_documents(run, unit_doc) == {"q": list(best.items())}
    assert collapse_to_documents(run, unit_doc)["q"] == [("a", 0.9), ("b", 0.8), ("c", 0.6)]


# -- what retrievers index and what readers read --------------------------------------------------------
def _unit(doc: str, position: int, text: str, **extra) -> Chunk:
    return Chunk(chunk_id=f"{doc}#{position}", doc_id=doc, text=text, start=0, end=len(text), n_tokens=len(text.split()),
                 position=position, **extra)


@pytest.mark.parametrize("spec", ["bm25", "dense(model=sentence-transformers/all-MiniLM-L6-v2)"])
def test_every_retriever_indexes_index_text(spec, cache):
    units = [_unit("a", 0, "An unrelated sentence about gardening.", context="Zebra migration in Kenya"),
             _unit("b", 0, "Gardening tips for tomatoes.", rewrite="Zebras migrate across the Serengeti each year."),
             _unit("c", 0, "Tomatoes need sun and water.")]
    retriever = get_retriever(spec, cache=cache).index(units)
    top = retriever.search({"q": "zebra migration"}, k=3)["q"]
    assert {top[0][0], top[1][0]} == {"a#0", "b#0"}  # found only through context / rewrite
    if hasattr(retriever, "embeddings"):
        expected = retriever.encoder.encode_passages([u.index_text for u in units])
        np.testing.assert_allclose(retriever.embeddings, expected, atol=1e-5)


def test_the_dense_x_reader_receives_the_proposition_rewrites(monkeypatch):
    from grainlab.experiments.systems import System
    from grainlab.studies import dense_x

    data = Dataset("toy", {"p": Document("p", "Ada Lovelace wrote notes. She was born in 1815.", "Ada Lovelace")},
                   {"q": "When was Ada Lovelace born?"}, {"q": {"p": 1}}, answers={"q": ["1815"]})
    units = [_unit("p", 0, "She was born in 1815.", rewrite="Ada Lovelace was born in 1815.")]
    monkeypatch.setattr(dense_x, "rank", lambda dataset, system, k, cache=None: ({"q": [("p#0", 1.0)]}, units))
    contexts = dense_x.retrieved_contexts(data, System("bm25", "none", None), budget_tokens=100)
    assert contexts["q"] == [("Ada Lovelace", "Ada Lovelace was born in 1815.")]
    reader = ScriptedReader(lambda prompt: "1815", "stub", new_tokens=1)
    rows = dense_x.reader_runs(data, reader, [({"unit": "proposition"}, contexts)], ["q"], closed_book=False)
    assert "Document [1](Title: Ada Lovelace) Ada Lovelace was born in 1815." in reader.prompts[0]
    assert rows["em"].tolist() == [1.0]


def test_late_chunking_cache_is_keyed_by_the_spans(cache):
    docs = {"d": Document("d", "Solar panels turn light into power. Batteries store that power for the night.")}
    retriever = get_retriever("late(model=sentence-transformers/all-MiniLM-L6-v2)", cache=cache)
    text = docs["d"].text
    first = [_unit("d", 0, text[:35]), Chunk("d#1", "d", text[36:], 36, len(text), 9, 1)]
    a = retriever.index(first, documents=docs).embeddings.copy()
    moved = [Chunk("d#0", "d", text[:20], 0, 20, 4, 0), Chunk("d#1", "d", text[21:], 21, len(text), 12, 1)]
    b = retriever.index(moved, documents=docs).embeddings
    assert not np.allclose(a, b)  # same ids, other spans: recomputed, not read from the first entry
    assert len(list((cache.root / "late").rglob("*.npy"))) == 2


# -- Lost in the Middle: 1-based positions end to end ------------------------------------------------------
def PositionReader():
    """Answers correctly exactly when the gold passage is printed as ``Document [1]``."""
    def answer(prompt):
        match = re.search(r"Document \[(\d+)\]\(Title: Gold\)", prompt)
        return "Paris" if match and match.group(1) == "1" else "unknown"

    return ScriptedReader(answer, "position-stub", prompt_tokens=lambda prompt: 100, new_tokens=1)


def test_lost_in_the_middle_positions_are_one_based_end_to_end():
    examples = [MultiDocExample(f"q{i}", "Capital of France?", ["Paris"], ("Gold", "Paris is the capital."),
                                [(f"D{j}", f"Distractor {j}.") for j in range(9)]) for i in range(3)]
    runs = qa_position_runs(examples, PositionReader(), {10: [0, 4, 9]}, closed_book=False, oracle=True)
    table = accuracy_by_position(runs, n_resamples=200).set_index(["setting", "position"])["accuracy"]
    assert table[("10 documents", 1)] == 1.0 and table[("10 documents", 5)] == 0.0
    assert table[("10 documents", 10)] == 0.0 and table[("oracle", 1)] == 1.0
