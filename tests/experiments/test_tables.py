"""Helpers over tidy result tables: paired comparisons between values of a column."""

import pandas as pd


def test_paired_between_compares_two_readers_on_the_questions_both_answered():
    import numpy as np

    from grainlab.experiments import paired_between

    rows = [{"model": "big", "setting": s, "qid": f"q{i}", "em": float(i % 2 == 0 or s == "b")}
            for s in ("a", "b") for i in range(10)]
    rows += [{"model": "small", "setting": s, "qid": f"q{i}", "em": 0.0} for s in ("a", "b") for i in range(6)]
    table = paired_between(pd.DataFrame(rows), "model", [("big", "small")], "em", "setting", n_resamples=500)
    a, b = table.set_index("setting").loc["a"], table.set_index("setting").loc["b"]
    assert a["n"] == b["n"] == 6  # q6..q9 were read by the bigger reader only
    assert a["delta"] == np.mean([1, 0, 1, 0, 1, 0]) and b["delta"] == 1.0
    assert (a["wins"], a["ties"], a["losses"]) == (3, 3, 0)
    assert list(table.columns[:3]) == ["setting", "model", "baseline_model"]
    assert (table["p_randomization_holm"] >= table["p_randomization"]).all()


def test_split_cutoff_names_the_measure_and_its_integer_cutoff():
    from grainlab.experiments import split_cutoff

    table = split_cutoff(pd.DataFrame({"measure": ["AnswerRecall@5", "Tokens@20", "nDCG@10"]}))
    assert list(table["measure_name"]) == ["AnswerRecall", "Tokens", "nDCG"]
    assert list(table["k"]) == [5, 20, 10] and table["k"].dtype.kind == "i"
    mixed = split_cutoff(pd.DataFrame({"measure": ["RR", "R@100"]}))
    assert mixed["k"].isna().tolist() == [True, False] and mixed["k"].iloc[1] == 100
