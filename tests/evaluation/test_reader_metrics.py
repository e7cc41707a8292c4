"""best_subspan_em and key–value accuracy exactly as Liu et al. score them, on hand-made cases."""

import pytest

from grainlab.evaluation.answers import best_subspan_em, first_line, kv_accuracy, squad_normalize


def test_squad_normalisation():
    assert squad_normalize("The  Eiffel-Tower!") == "eiffeltower"
    assert squad_normalize("an Apple a day") == "apple day"
    assert squad_normalize("Röntgen") == "röntgen"  # no Unicode folding


@pytest.mark.parametrize("prediction,answers,expected", [
    ("Wilhelm Conrad Röntgen", ["Wilhelm Conrad Röntgen"], 1.0),
    ("It was Wilhelm Conrad Röntgen, in 1901.", ["Wilhelm Conrad Röntgen"], 1.0),  # substring counts
    ("The answer is the Beatles.", ["Beatles"], 1.0),
    ("Röntgen", ["Wilhelm Conrad Röntgen"], 0.0),  # the gold must sit inside the prediction
    ("I don't know\nWilhelm Conrad Röntgen", ["Wilhelm Conrad Röntgen"], 0.0),  # only the first line
    ("\nWilhelm Conrad Röntgen", ["Wilhelm Conrad Röntgen"], 0.0),
    ("  paris  \nlyon", ["Lyon", "Paris"], 1.0),
    ("", ["x"], 0.0),
])
def test_best_subspan_em(prediction, answers, expected):
    assert best_subspan_em(prediction, answers) == expected


def test_first_line_and_kv():
    assert first_line("  a b \n c") == "a b"
    assert kv_accuracy('"BB3BA2A5-7de8"', "bb3ba2a5-7de8") == 1.0
    assert kv_accuracy("bb3ba2a5", "bb3ba2a5-7de8") == 0.0


def test_exact_match_is_equality_after_squad_normalisation():
    from grainlab.evaluation.answers import exact_match

    assert exact_match("The Denver Broncos.\nmore", ["Denver Broncos"]) == 1.0
    assert exact_match("Denver Broncos won", ["Denver Broncos"]) == 0.0
    assert exact_match("", ["x"]) == 0.0
