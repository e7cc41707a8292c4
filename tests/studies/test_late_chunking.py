"""The late-chunking study's comparison with an earlier run."""

from pathlib import Path

import pandas as pd

from grainlab.studies.late_chunking import changes_from, finding


def _pair(system: str, delta: float, p: float, measure: str = "nDCG@10", **extra: object) -> dict:
    return {"system": system, "baseline": system.replace("late", "naive"), "measure": measure, "delta": delta,
            "ci_low": delta - 0.01, "ci_high": delta + 0.01, "p_randomization_holm": p, **extra}


def _previous(folder: Path) -> Path:
    pd.DataFrame([_pair("late · fixed 256 tokens", -0.005, 1.0), _pair("late · 5 sentences", 0.02, 0.01)]).to_csv(
        folder / "late_vs_naive.csv", index=False)
    pd.DataFrame([{"size": s, "method": m, "mean": v} for s, m, v in
                  [(16, "naive", 0.61), (16, "late", 0.66), (64, "naive", 0.68), (64, "late", 0.66)]]).to_csv(
        folder / "sweep.csv", index=False)
    (folder / "sweep").mkdir()
    pd.DataFrame([_pair("late · 16", 0.05, 0.003) | {"baseline": "naive · 16"},
                  _pair("late · 64", 0.05, 0.2) | {"baseline": "naive · 16"}]).to_csv(
        folder / "sweep" / "significance.csv", index=False)
    (folder / "squad_dev_stitched").mkdir()
    pd.DataFrame([_pair("late", -0.1, 0.0002, "AnswerRecall@5")]).to_csv(
        folder / "squad_dev_stitched" / "significance.csv", index=False)
    return folder


def test_finding_needs_significance_after_holm():
    assert finding(0.03, 0.01) == "late better"
    assert finding(-0.03, 0.01) == "late worse"
    assert finding(0.03, 0.05) == "no significant difference"
    assert finding(0.03, None) == "not tested"


def test_changes_from_pairs_every_comparison_of_either_run(tmp_path):
    now_boundary = pd.DataFrame([_pair("late · fixed 256 tokens", 0.03, 0.01), _pair("late · 5 sentences", 0.02, 0.01)])
    now_sweep = pd.DataFrame([_pair("late · 16", 0.04, 0.02), _pair("late · 64", 0.0, 0.9),
                              _pair("late · 512", 0.01, 0.5)])
    now_long = pd.DataFrame([_pair("late", 0.05, 0.001, "AnswerRecall@5", dataset="squad_dev_stitched"),
                             _pair("late", 0.02, 0.3, "AnswerRecall@5", dataset="covid_qa")])
    table = changes_from(_previous(tmp_path), now_boundary, now_sweep, now_long).set_index(["part", "arm"])
    assert len(table) == 7
    row = table.loc[("scifact", "fixed 256 tokens")]
    assert (row["MiniLM finding"], row["nomic finding"], row["changed"]) == (
        "no significant difference", "late better", True)
    assert not table.loc[("scifact", "5 sentences"), "changed"]
    # the earlier run tested late · 16 against naive · 16 only; 64 has a delta from its means, no test
    assert table.loc[("sweep", "16"), "MiniLM finding"] == "late better"
    assert table.loc[("sweep", "64"), "MiniLM finding"] == "not tested"
    assert abs(table.loc[("sweep", "64"), "MiniLM late − naive"] - (-0.02)) < 1e-12
    assert table.loc[("sweep", "512"), "MiniLM finding"] == "not run"
    assert table.loc[("squad_dev_stitched", "squad_dev_stitched"), "MiniLM finding"] == "late worse"
    assert table.loc[("squad_dev_stitched", "squad_dev_stitched"), "nomic finding"] == "late better"
    assert table.loc[("covid_qa", "covid_qa"), "MiniLM finding"] == "not run"
