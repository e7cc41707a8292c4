"""The Lost-in-the-Middle templates, character for character (the expected strings are written
out by hand from the paper's prompt files)."""

import pytest

from grainlab.errors import ConfigError
from grainlab.readers import closedbook_prompt, kv_prompt, qa_prompt

DOCS = [("first doc", "first doc text"), ("second doc", "second doc text")]
INSTRUCTION = ("Write a high-quality answer for the given question using only the provided search results "
               "(some of which might be irrelevant).")


def test_multi_document_prompt():
    expected = (f"{INSTRUCTION}\n\nDocument [1](Title: first doc) first doc text\n"
                "Document [2](Title: second doc) second doc text\n\nQuestion: test question\nAnswer:")
    assert qa_prompt("test question", DOCS) == expected


def test_random_ordering_and_query_aware_variants():
    random_order = qa_prompt("q", DOCS, mention_random_ordering=True)
    assert random_order.startswith(INSTRUCTION + " The search results are ordered randomly.\n\nDocument [1]")
    aware = qa_prompt("q", DOCS, query_aware=True)
    assert aware.startswith(f"{INSTRUCTION}\n\nQuestion: q\n\nDocument [1](Title: first doc)")
    assert aware.endswith("second doc text\n\nQuestion: q\nAnswer:")
    with pytest.raises(ConfigError):
        qa_prompt("q", DOCS, mention_random_ordering=True, query_aware=True)
    with pytest.raises(ConfigError):
        qa_prompt("q", [])


def test_closed_book_and_oracle():
    assert closedbook_prompt("test question") == "Question: test question\nAnswer:"
    assert qa_prompt("q", DOCS[:1]) == f"{INSTRUCTION}\n\nDocument [1](Title: first doc) first doc text\n\nQuestion: q\nAnswer:"


def test_kv_prompt():
    data = [("test key1", "test value1"), ("test key2", "test value2"), ("test key3", "test value3")]
    expected = "\n".join(["Extract the value corresponding to the specified key in the JSON object below.", "",
                          "JSON data:", '{"test key1": "test value1",', ' "test key2": "test value2",',
                          ' "test key3": "test value3"}', "", 'Key: "test key2"', "Corresponding value:"])
    assert kv_prompt(data, "test key2") == expected
    aware = kv_prompt(data, "test key2", query_aware=True)
    assert aware.startswith("Extract the value corresponding to the specified key in the JSON object below.\n\n"
                            'Key: "test key2"\n\nJSON data:\n{"test key1"')
    for bad in ([data[0]], data + [data[0]]):
        with pytest.raises(ConfigError):
            kv_prompt(bad, "test key1")
    with pytest.raises(ConfigError, match="not among"):
        kv_prompt(data, "missing")


def test_longrag_prompts():
    from grainlab.readers import longrag_prompt, short_answer_prompt

    prompt = longrag_prompt("who wrote hamlet", [("Hamlet", "A play by Shakespeare."), ("Globe", "A theatre.")])
    assert prompt.startswith("Go through the following context and then extract the answer")
    assert "ordered by title: Hamlet, Globe." in prompt
    assert "The context is: Title: Hamlet\nText: A play by Shakespeare.\n\nTitle: Globe\nText: A theatre.." in prompt
    assert "answer the question: who wrote hamlet.Answer the question directly." in prompt
    short = short_answer_prompt("who wrote hamlet", "It was written by William Shakespeare.")
    assert short.startswith("As an AI assistant") and short.count("Short Answer: ") == 5
    assert short.endswith("Question: who wrote hamlet\nLong Answer: It was written by William Shakespeare.\nShort Answer: ")


def test_after_answer_label_is_longrags_post_processing():
    from grainlab.readers.prompts import after_answer_label

    assert after_answer_label("Short Answer: Kate Mulgrew") == "Kate Mulgrew"
    assert after_answer_label("the ANSWER: 1966") == "1966"
    assert after_answer_label("The answer to the question is: 1966") == "The answer to the question is: 1966"
    assert after_answer_label("Kate Mulgrew") == "Kate Mulgrew"
