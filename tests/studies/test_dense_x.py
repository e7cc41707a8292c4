"""Dense X study pieces: article subsets, unit contexts within a token budget, the reader table."""

from grainlab.data import Dataset, Document
from grainlab.models.tokenizers import get_tokenizer
from grainlab.studies.dense_x import (
    article_subset,
    reader_runs,
    retrieved_contexts,
    unit_systems,
)
from tests.scripted_reader import ScriptedReader


def squad_like():
    docs = {"a0p0": Document("a0p0", "Denver won Super Bowl 50. The game was in Santa Clara.", "Super_Bowl_50"),
            "a0p1": Document("a0p1", "Beyoncé sang at the halftime show.", "Super_Bowl_50"),
            "a1p0": Document("a1p0", "Warsaw is the capital of Poland.", "Warsaw")}
    queries = {"q1": "in which city was the game played", "q2": "capital of poland"}
    return Dataset("squad_toy", docs, queries, {"q1": {"a0p0": 1}, "q2": {"a1p0": 1}},
                   {"q1": ["Santa Clara"], "q2": ["Warsaw"]}, info={"article_of": {"a0p0": 0, "a0p1": 0, "a1p0": 1}})


def test_article_subset_keeps_its_paragraphs_and_questions():
    subset = article_subset(squad_like(), 1)
    assert set(subset.corpus) == {"a0p0", "a0p1"} and set(subset.queries) == {"q1"}


def test_unit_systems_score_passages_by_their_best_unit():
    systems = unit_systems("bm25", "BM25", "sentences(n=2)")
    assert systems["passage"].aggregate is None and systems["sentence"].aggregate == "max"
    assert systems["proposition"].chunker.startswith("sentences(") and systems["proposition"].display == "BM25 · proposition"


def test_contexts_are_units_in_rank_order_within_the_budget(cache):
    data = squad_like()
    contexts = retrieved_contexts(data, unit_systems("bm25", "BM25", "sentences(n=1)")["sentence"], 7, cache)
    first = contexts["q1"]
    assert first[0] == ("Super_Bowl_50", "The game was in Santa Clara.")  # the best sentence, not its passage
    assert sum(get_tokenizer("cl100k_base").count(t) for _, t in first) <= 7
    whole = retrieved_contexts(data, unit_systems("bm25", "BM25", "sentences(n=1)")["passage"], 500, cache)
    assert whole["q2"][0] == ("Warsaw", "Warsaw is the capital of Poland.") and len(whole["q2"]) == 3


def test_reader_runs_score_exact_match_and_answer_in_prediction():
    reader = ScriptedReader(lambda p: "Santa Clara" if "Document [1]" in p else "in California, Santa Clara")
    data = squad_like()
    setting = {"retriever_label": "BM25", "unit": "passage", "l": 100}
    rows = reader_runs(data, reader, [(setting, {"q1": [("Super_Bowl_50", "The game was in Santa Clara.")]})], ["q1"])
    assert list(rows["unit"]) == ["passage", "closed-book"] and list(rows["l"]) == [100, 0]
    assert list(rows["em"]) == [1.0, 0.0] and list(rows["answer_in_prediction"]) == [1.0, 1.0]
    assert list(rows["new_tokens"]) == [2, 2] and list(rows["max_new_tokens"]) == [32, 32]


def test_a_sentence_answer_is_scored_by_its_extracted_short_answer():
    """Issue 36 item 2: a reader answering in sentences scored EM 0 everywhere; the short-answer
    step (LongRAG's extraction prompt) gives EM its span, and answer-in-prediction stays beside it."""
    def answer(prompt):
        if prompt.startswith("As an AI assistant"):  # the extraction step
            return "Santa Clara"
        return "Based on the provided search results, the game was played in Santa Clara, California."

    reader = ScriptedReader(answer)
    rows = reader_runs(squad_like(), reader, [({"unit": "passage"}, {"q1": [("t", "The game was in Santa Clara.")]})],
                       ["q1"], closed_book=False)
    assert rows[["short_answer", "extracted", "em", "answer_in_prediction"]].values.tolist() == [
        ["Santa Clara", True, 1.0, 1.0]]
    assert sum(p.startswith("As an AI assistant") for p in reader.prompts) == 1


def test_means_with_ci_one_row_per_setting_in_first_seen_order():
    import pandas as pd

    from grainlab.evaluation.significance import bootstrap_ci
    from grainlab.experiments.tables import means_with_ci

    runs = pd.DataFrame({"setting": ["b", "a", "b", "a", "b"], "em": [1.0, 0.0, 0.0, 0.0, 1.0]})
    table = means_with_ci(runs, "setting", ["em"], n_resamples=200, seed=0)
    assert list(table.columns) == ["setting", "n", "em", "em_low", "em_high"]
    assert list(table["setting"]) == ["b", "a"] and list(table["n"]) == [3, 2]
    assert table.loc[0, "em"] == 2 / 3 and table.loc[1, ["em", "em_low", "em_high"]].tolist() == [0.0, 0.0, 0.0]
    assert (table.loc[0, "em_low"], table.loc[0, "em_high"]) == bootstrap_ci([1.0, 0.0, 1.0], n_resamples=200, seed=0)


def test_recall_points_keep_one_row_per_query_and_k():
    import pandas as pd

    from grainlab.studies.dense_x import recall_points

    per_query = pd.DataFrame({"qid": ["a", "a", "b", "b", "a"], "value": [1.0, 0.0, 1.0, 1.0, 9.0],
                              "measure": ["AnswerRecall@5", "AnswerRecall@20", "AnswerRecall@5", "AnswerRecall@20",
                                          "Tokens@5"]})
    points = recall_points(per_query)
    assert list(points["k"]) == [5, 20, 5, 20] and list(points["recall"]) == [1.0, 0.0, 1.0, 1.0]


def test_word_budget_recall_reads_the_first_words_of_the_units_in_rank_order(cache):
    from grainlab.studies.dense_x import first_words, word_budget_recall

    assert first_words(["a b c", "d e"], 4) == "a b c d" and first_words(["a b"], 5) == "a b"
    data = squad_like()
    sentences = unit_systems("bm25", "BM25", "sentences(n=1)")["sentence"]
    table = word_budget_recall(data, sentences, [3, 7], cache).set_index(["qid", "l_words"])
    # q1's best sentence is "The game was in Santa Clara." (6 words): the answer needs 6 words read
    assert table.loc[("q1", 3), "recall"] == 0.0 and table.loc[("q1", 7), "recall"] == 1.0
    assert table.loc[("q1", 3), "words_read"] == 3
    passages = unit_systems("bm25", "BM25", "sentences(n=1)")["passage"]
    whole = word_budget_recall(data, passages, [7], cache).set_index("qid")
    assert whole.loc["q1", "recall"] == 0.0  # the passage spends its first words on "Denver won Super Bowl 50."


def test_recall_by_answer_survival_splits_each_units_recall_by_whether_the_answer_was_kept():
    import pandas as pd

    from grainlab.studies.dense_x import recall_by_answer_survival

    # q1, q2: answer kept, propositions as good as passages; q3: answer dropped, propositions miss it
    values = {("q1", "passage"): 1, ("q1", "proposition"): 1, ("q2", "passage"): 0, ("q2", "proposition"): 1,
              ("q3", "passage"): 1, ("q3", "proposition"): 0, ("q4", "passage"): 1, ("q4", "proposition"): 0}
    per_query = pd.DataFrame([{"retriever_label": "BM25", "unit": u, "qid": q, "measure": m, "value": v}
                              for (q, u), v in values.items() for m in ("AnswerRecall@5", "AnswerRecall@20")])
    survived = {"q1": True, "q2": True, "q3": False}  # q4's passage never stated the answer: left out
    table = recall_by_answer_survival(per_query, survived, ["AnswerRecall@5"])
    assert list(table["answer"]) == ["kept", "dropped"] and set(table["measure"]) == {"AnswerRecall@5"}
    kept, dropped = table.iloc[0], table.iloc[1]
    assert (kept["n"], kept["passage"], kept["proposition"], kept["proposition − passage"]) == (2, 0.5, 1.0, 0.5)
    assert (dropped["n"], dropped["passage"], dropped["proposition − passage"]) == (1, 1.0, -1.0)
