"""LongRAG corpora: passages, title documents and groups keep every question and its gold text."""

from grainlab.data import Dataset, Document
from grainlab.studies.longrag import (
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


class EchoReader:
    """A stand-in reader: the long answer repeats a fixed text; the extraction step answers 'Berlin'."""

    response_prefix = ""
    model_id = "test/echo"

    def __init__(self, long_text):
        self.long_text, self.prompts = long_text, []

    def generate(self, prompts, progress=True):
        from grainlab.readers import Generation

        self.prompts += prompts
        return [Generation("Berlin" if p.startswith("As an AI assistant") else self.long_text, len(p), 3, 0.1)
                for p in prompts]


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
