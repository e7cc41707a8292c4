"""The U-curve tests: paired first/last − middle contrasts and the shape read from them."""

import numpy as np
import pandas as pd
import pytest

from grainlab.studies.claims import verdict_table
from grainlab.studies.lost_in_the_middle import (
    claims,
    curve_shape,
    middle_index,
    paper_contrasts,
    position_contrasts,
    report,
    with_position,
)


def _runs(model: str, n_docs: int, correct_by_gold: dict[int, list[int]]) -> pd.DataFrame:
    return pd.DataFrame([{"model": model, "qid": f"q{i}", "setting": f"{n_docs} documents", "n_docs": n_docs,
                          "gold_index": gold, "correct": float(value), "prompt_tokens": 100}
                         for gold, values in correct_by_gold.items() for i, value in enumerate(values)])


def test_middle_is_the_tested_position_nearest_the_centre():
    assert middle_index(10, [0, 4, 9]) == 4
    assert middle_index(20, [0, 4, 9, 14, 19]) == 9
    assert middle_index(75, [0, 18, 37, 55, 74]) == 37


def test_contrasts_are_paired_differences_over_questions_seen_at_every_position():
    rng = np.random.default_rng(0)
    n = 40
    first, middle, last = (rng.integers(0, 2, n) for _ in range(3))
    runs = _runs("org/m", 10, {0: list(first), 4: list(middle), 9: list(last)})
    runs = runs[~((runs["qid"] == "q0") & (runs["gold_index"] == 9))]  # q0 lacks one position: left out
    table = position_contrasts(runs, n_resamples=2000).set_index("contrast")
    assert table.loc["first − middle", "n"] == n - 1
    assert table.loc["first − middle", "delta"] == pytest.approx((first[1:] - middle[1:]).mean())
    assert table.loc["last − middle", "delta"] == pytest.approx((last[1:] - middle[1:]).mean())
    assert table.loc["first − middle", "ci_low"] <= table.loc["first − middle", "delta"] <= table.loc["first − middle", "ci_high"]
    assert "p_holm" not in table.columns  # the one Holm family is the verdict table's


def _verdicts(runs, n_resamples=2000):
    runs = with_position(runs)
    return verdict_table(runs, claims(runs), system_col="position", value_col="correct", n_resamples=n_resamples)


def test_shapes_follow_the_verdicts():
    n = 30
    ones, zeros = [1] * n, [0] * n
    runs = pd.concat([_runs("u", 10, {0: ones, 4: zeros, 9: ones}),
                      _runs("recent", 10, {0: zeros, 4: zeros, 9: ones}),
                      _runs("flat", 10, {0: [1, 0] * 15, 4: [0, 1] * 15, 9: [1, 0] * 15}),
                      _runs("nothing", 10, {0: zeros, 4: zeros, 9: zeros})])
    shapes = curve_shape(_verdicts(runs)).set_index("model")["shape"]
    assert shapes.to_dict() == {"u": "U", "recent": "recency (first untestable)", "flat": "inconclusive",
                                "nothing": "untestable"}


def test_a_shape_never_contradicts_its_verdicts():
    """Issue 36 item 7: a per-reader Holm family called a curve "U" while the study-wide verdicts
    were inconclusive; the shape is now read from the verdicts themselves."""
    rng = np.random.default_rng(3)
    n = 40
    runs = pd.concat([_runs(f"m{i}", 10, {0: list(rng.random(n) < 0.7), 4: list(rng.random(n) < 0.45),
                                          9: list(rng.random(n) < 0.65)}) for i in range(4)])
    verdicts = _verdicts(runs)
    for row in curve_shape(verdicts).itertuples():
        mine = verdicts[verdicts["model"] == row.model].sort_values("system", key=lambda s: s.astype(int))
        both = mine["verdict"].tolist() == ["reproduced", "reproduced"]
        assert (row.shape == "U") == both


def test_report_sets_the_paper_difference_and_the_verdict_p_beside_ours():
    n = 20
    runs = _runs("m", 20, {0: [1] * n, 4: [1] * n, 9: [0] * n, 14: [0] * n, 19: [1] * n})
    contrasts = position_contrasts(runs, n_resamples=500)
    verdicts = _verdicts(runs, 500)
    summary = pd.DataFrame(columns=["setting", "position", "accuracy", "ci_low", "ci_high", "n"])
    kv = summary.copy()
    rows = report(summary, kv, "", contrasts, verdicts).rows
    paper = paper_contrasts().set_index(["setting", "contrast"])["paper"]
    first = rows[rows["position"] == "1 vs 10"].iloc[0]
    assert first["paper"] == pytest.approx(paper[("20 documents", "first − middle")]) == pytest.approx(0.758 - 0.538)
    expected = verdicts[verdicts["system"] == "1"].iloc[0]
    assert first["ours"] == 1.0 and first["p_holm"] == expected["p_holm"] < 0.01
    assert first["verdict"] == expected["verdict"] == "reproduced"


def test_two_positions_give_no_contrast_and_no_shape():
    runs = _runs("m", 10, {0: [1, 0], 9: [0, 1]})
    contrasts = position_contrasts(runs, n_resamples=100)
    assert contrasts.empty and "p_randomization" in contrasts.columns
    assert curve_shape(_verdicts(runs)).empty
