import pytest

from grainlab.data import Dataset, Document, stitch_documents


def make(texts, answers):
    corpus = {f"p{i}": Document(f"p{i}", t) for i, t in enumerate(texts)}
    queries = {f"q{i}": f"question {i}" for i in range(len(answers))}
    qrels = {f"q{i}": {doc: 1} for i, (doc, _) in enumerate(answers)}
    return Dataset("toy", corpus, queries, qrels, {f"q{i}": a for i, (_, a) in enumerate(answers)})


def test_stitched_documents_reach_min_length_and_keep_offsets():
    texts = [f"Paragraph {i} talks about topic {i}. " * 5 for i in range(10)]
    data = stitch_documents(make(texts, [("p0", ["topic 0"])]), min_chars=500)
    assert all(len(d.text) >= 500 for d in data.corpus.values())
    for stitched_id, spans in data.info["segments"].items():
        text = data.corpus[stitched_id].text
        for source, start, end in spans:
            assert text[start:end] == texts[int(source[1:])]
    assert sum(len(s) for s in data.info["segments"].values()) == 10


def test_only_questions_with_a_unique_answer_survive():
    texts = ["alpha beta. " * 30, "gamma unique delta. " + "filler. " * 40, "alpha again. " * 30]
    answers = [("p0", ["alpha beta"]), ("p1", ["unique delta", "filler"]), ("p2", ["missing"])]
    data = stitch_documents(make(texts, answers), min_chars=10_000)
    assert len(data.corpus) == 1
    assert data.answers == {"q1": ["unique delta"]}
    assert data.qrels == {"q1": {"toy-stitched-0": 1}}
    assert data.name == "toy_stitched" and data.info["questions_before"] == 3


def test_short_tail_is_merged_into_the_previous_document():
    texts = ["x" * 60, "y" * 60, "z" * 10]
    data = stitch_documents(make(texts, []), min_chars=100)
    assert [len(d.text) for d in data.corpus.values()] == [60 + 2 + 60 + 2 + 10]


def test_a_document_of_exactly_min_chars_closes_its_group():
    corpus = {f"d{i}": Document(f"d{i}", c * 10) for i, c in enumerate("abcd")}  # 10 characters each
    data = Dataset("toy", corpus, {}, {})
    # "aaaaaaaaaa" + "\n\n" + "bbbbbbbbbb" = 22 characters: exactly min_chars closes the group
    stitched = stitch_documents(data, min_chars=22)
    assert [len(d.text) for d in stitched.corpus.values()] == [22, 22]
    assert [len(d.text) for d in stitch_documents(data, min_chars=23).corpus.values()] == [46]


def test_articles_join_their_own_paragraphs_only():
    from grainlab.data import join_articles
    from grainlab.errors import ConfigError

    texts = ["Paris is in France.", "The Seine flows through Paris.", "Berlin is in Germany.", "Berlin has a zoo."]
    data = make(texts, [("p1", ["Seine"]), ("p3", ["zoo"]), ("p0", ["Paris"])])
    data.corpus = {d: Document(d, doc.text, t) for (d, doc), t in zip(data.corpus.items(), ["Paris", "Paris", "Berlin", "Berlin"])}
    data.info["article_of"] = {"p0": 0, "p1": 0, "p2": 1, "p3": 1}
    joined = join_articles(data)
    assert [d.text for d in joined.corpus.values()] == ["Paris is in France.\n\nThe Seine flows through Paris.",
                                                        "Berlin is in Germany.\n\nBerlin has a zoo."]
    assert [d.title for d in joined.corpus.values()] == ["Paris", "Berlin"]
    assert joined.qrels == {"q0": {"toy-articles-0": 1}, "q1": {"toy-articles-1": 1}}  # "Paris" occurs twice: dropped
    for doc_id, spans in joined.info["segments"].items():
        for source, start, end in spans:
            assert joined.corpus[doc_id].text[start:end] == data.corpus[source].text
    data.info.pop("article_of")
    with pytest.raises(ConfigError, match="article"):
        join_articles(data)


def test_a_sample_is_labelled_with_what_was_run():
    """Issue 35: a quick profile's 2-document sample was labelled "all stitched documents"."""
    from grainlab.data import sample_dataset, sample_label
    from grainlab.data.types import Dataset, Document

    corpus = {f"d{i}": Document(f"d{i}", f"text {i}") for i in range(5)}
    queries = {f"q{i}": f"question {i}" for i in range(5)}
    data = Dataset("toy", corpus, queries, {f"q{i}": {f"d{i}": 1} for i in range(5)})
    assert sample_label(data, "stitched documents") == "all 5 stitched documents"
    small = sample_dataset(data, 100, 2, seed=0, mode="docs")
    assert sample_label(small, "stitched documents") == "2 of 5 stitched documents, 2 of 5 questions (seed 0)"
