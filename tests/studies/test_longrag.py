"""LongRAG corpora: passages, title documents and groups keep every question and its gold text."""

import pandas as pd
import pytest

from grainlab.data import Dataset, Document
from grainlab.errors import ConfigError
from grainlab.studies.longrag import (
    document_corpus,
    grouped_corpus,
    merge_sources,
    passage_corpus,
    similarity_neighbours,
)
from tests.scripted_reader import ScriptedReader


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


def EchoReader(long_text):
    """A stand-in reader: the long answer repeats a fixed text; the extraction step answers 'Berlin'."""
    return ScriptedReader(lambda p: "Berlin" if p.startswith("As an AI assistant") else long_text, "test/echo",
                          prompt_tokens=len, new_tokens=3)


def test_reader_context_keeps_rank_order_and_the_budget():
    from grainlab.models.tokenizers import get_tokenizer
    from grainlab.studies.longrag import reader_context

    pool = sources()
    picked = reader_context(pool, [("nq:p3", 2.0), ("nq:p1", 1.0), ("nq:p2", 0.5)], budget_tokens=20)
    assert [t for t, _ in picked] == ["Berlin", "Paris"]  # p1 crosses the budget: cut, nothing after it
    assert picked[0][1] == "Berlin is the capital of Germany."
    assert sum(get_tokenizer("cl100k_base").count(text) for _, text in picked) <= 20


def test_long_answers_are_shortened_by_the_extraction_step():
    from grainlab.studies.longrag import long_reader_runs

    pool = sources()
    run = {"q1": [("nq:p3", 1.0)]}
    reader = EchoReader("The capital of Germany is the city of Berlin.")
    rows = long_reader_runs({"passages": (pool, run)}, reader, ["q1"], budget_tokens=100)
    assert list(rows["setting"]) == ["passages", "closed-book"]
    assert rows["extracted"].all() and (rows["short_answer"] == "Berlin").all() and rows["em"].eq(1.0).all()
    assert rows["answer_in_long"].eq(1.0).all()
    assert list(rows["context_has_answer"]) == [1.0, 0.0]
    assert "Title: Berlin\nText: Berlin is the capital of Germany." in reader.prompts[0]
    short = long_reader_runs({"passages": (pool, run)}, EchoReader("Bonn"), ["q1"], budget_tokens=100)
    assert not short["extracted"].any() and short["em"].eq(0.0).all()  # short answers are kept as they are


def test_recall_points_put_each_query_at_its_systems_mean_tokens():
    import pandas as pd

    from grainlab.studies.longrag import recall_points, recall_table

    per_query = pd.DataFrame([{"unit": u, "retriever_label": "BM25", "qid": q, "measure": f"{m}@{k}",
                               "value": v} for u, scale in (("passages", 100), ("documents", 700))
                              for q in ("a", "b") for k in (1, 2)
                              for m, v in (("AnswerRecall", float(q == "a" or k == 2)), ("Tokens", scale * k))])
    aggregate = per_query.groupby(["unit", "retriever_label", "measure"], as_index=False)["value"].mean()
    table = recall_table(aggregate.rename(columns={"value": "mean"}).assign(corpus_size=10))
    points = recall_points(per_query, table)
    assert len(points) == 8 and set(points["avg tokens"]) == {100, 200, 700, 1400}
    # the mean of the points is the table's recall at that (unit, k)
    means = points.groupby(["unit", "k"])["answer recall"].mean()
    assert means[("passages", 1)] == 0.5 and means[("documents", 2)] == 1.0


def test_encoder_and_scoring_split_the_retriever_label():
    import pandas as pd

    from grainlab.studies.longrag import with_encoder_and_scoring

    points = pd.DataFrame({"retriever": ["BM25", "MiniLM", "MiniLM · MaxP", "MiniLM · first 512 tokens",
                                         "nomic · whole unit (≤ its context)"]})
    split = with_encoder_and_scoring(points)
    assert list(split["encoder"]) == ["BM25", "MiniLM", "MiniLM", "MiniLM", "nomic"]
    assert list(split["scoring"]) == ["whole unit", "whole unit", "MaxP", "first 512 tokens",
                                      "whole unit (≤ its context)"]


def test_long_units_scored_by_their_best_member_passage_never_recall_less_than_passages():
    """Issue 36 item 4: the bound MaxP over member passages implies — a unit holding the top
    passage is the top unit, so its answer recall at k cannot fall below the passages' at k."""
    from grainlab.evaluation.answers import answer_recall
    from grainlab.studies.longrag import member_passage_bound, member_sources

    pool = sources()
    passages = passage_corpus(pool, words=100)
    documents = document_corpus(pool)
    grouped = grouped_corpus(documents, {"Paris": ["Berlin"], "Berlin": ["Paris"], "Rome": []}, max_tokens=4000)
    assert sorted(member_sources(documents)["Paris"]) == ["nq:p1", "nq:p2"]
    assert sorted(s for members in member_sources(grouped).values() for s in members) == sorted(pool.corpus)
    # passages ranked: one of Paris first, Berlin's second, Rome's last
    order = [p for p in passages.corpus if p.startswith("nq:p1")][:1] + ["nq:p3#0", "squad:s1#0"]
    run = {"q1": [(p, 1.0 - i / 10) for i, p in enumerate(order)]}
    bound = member_passage_bound(passages, run, documents, [1, 2]).set_index("measure")["value"]
    assert bound.to_dict() == {"AnswerRecall@1": 0.0, "AnswerRecall@2": 1.0}  # Paris, then Berlin
    flat = answer_recall(run, {p: d.text for p, d in passages.corpus.items()}, passages.answers, [1, 2])
    assert (bound.to_numpy() >= flat.set_index("measure")["value"].to_numpy()).all()
    with pytest.raises(ConfigError, match="member passages"):
        member_passage_bound(passages, run, passages, [1])


def test_the_papers_recall_marks_sit_at_units_times_their_stated_size():
    from grainlab.studies.longrag import paper_points

    marks = {label: (tokens, recall) for label, tokens, recall in paper_points(max_units=20)}
    assert marks == {"paper passages ×1": (120, 0.5224), "paper groups ×1": (4000, 0.7169),
                     "×4": (16000, 0.863), "×8": (32000, 0.8853)}  # a unit named once


def test_the_bound_note_reads_the_bound_the_passages_and_each_piece_size_at_k():
    from grainlab.studies.longrag import bound_note

    beside = pd.DataFrame([
        {"unit": "grouped documents", "retriever": "enc · max over member passages", "units retrieved": 1,
         "answer recall": 0.88},
        {"unit": "passages", "retriever": "enc", "units retrieved": 1, "answer recall": 0.826},
        {"unit": "grouped documents", "retriever": "enc · MaxP 128", "units retrieved": 1, "answer recall": 0.763},
        {"unit": "grouped documents", "retriever": "enc · MaxP 512", "units retrieved": 1, "answer recall": 0.509},
        {"unit": "grouped documents", "retriever": "enc · MaxP 512", "units retrieved": 4, "answer recall": 0.75},
        {"unit": "documents", "retriever": "enc · MaxP 512", "units retrieved": 1, "answer recall": 0.85}])
    note = bound_note(beside, "enc")
    assert "AR@1 88.0% against the passages' 82.6%" in note
    assert "512-token pieces 50.9%, 128-token pieces 76.3%" in note and "75.0%" not in note and "85.0%" not in note


def test_the_reader_note_is_written_from_the_reader_table():
    from grainlab.studies.longrag import reader_note

    table = pd.DataFrame([{"model": "org/A", "setting": s, "n": 10, "em": em, "context_has_answer": held}
                          for s, em, held in (("closed-book", 0.0, 0.0), ("passages", 0.2, 0.9),
                                              ("documents", 0.25, 0.95), ("grouped documents", 0.1, 0.5))])
    assert reader_note(table) == ("Readers over passages / documents / grouped documents at the same token budget: "
                                  "A (n=10): exact match 0.20 / 0.25 / 0.10, context holds the answer "
                                  "90% / 95% / 50%.")
