import pytest

from grainlab.evaluation import answer_recall, has_answer, normalize_answer


@pytest.mark.parametrize("raw,normal", [("The Denver Broncos!", "denver broncos"),
                                        ("  a   Tale of Two Cities ", "tale of two cities"),
                                        ("Röntgen", "ro\u0308ntgen"), ("U.S.A.", "usa")])
def test_squad_normalisation(raw, normal):
    assert normalize_answer(raw) == normal


def test_matches_whole_words_only():
    assert has_answer("The Broncos won Super Bowl 50.", ["super bowl 50"])
    assert not has_answer("concatenate the strings", ["cat"])
    assert has_answer("Wilhelm Conrad Röntgen won.", ["Wilhelm Conrad R\u00f6ntgen"])
    assert not has_answer("anything", ["", "  "])


def test_answer_recall_at_k():
    run = {"q1": [("u1", 3.0), ("u2", 2.0), ("u3", 1.0)], "q2": [("u1", 1.0)]}
    texts = {"u1": "nothing here", "u2": "still nothing", "u3": "Paris is lovely"}
    table = answer_recall(run, texts, {"q1": ["Paris"], "q2": ["Paris"], "q3": ["x"]}, [1, 2, 3])
    got = {(r.qid, r.measure): r.value for r in table.itertuples()}
    assert [got[("q1", f"AnswerRecall@{k}")] for k in (1, 2, 3)] == [0.0, 0.0, 1.0]
    assert got[("q2", "AnswerRecall@3")] == 0.0 and got[("q3", "AnswerRecall@1")] == 0.0
