"""The late-chunking study's comparison with an earlier run."""

from pathlib import Path

import pandas as pd

from grainlab.studies import late_chunking as study
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


def test_window_position_agrees_with_how_macro_windows_are_stitched():
    import numpy as np

    from grainlab.retrieval.late import macro_windows, stitch_windows

    for n, window, overlap in ((5000, 512, 256), (5000, 1024, 256), (4097, 2048, 256), (700, 512, 0)):
        windows = macro_windows(n, window, overlap)
        # each window's outputs: (window index, position inside it); stitching keeps the owner of each token
        outputs = [np.array([[w, t - s] for t in range(s, e)]) for w, (s, e) in enumerate(windows)]
        owners = stitch_windows(outputs, overlap)
        assert len(owners) == n
        for token in (0, window - 1, window, window + 1, n // 2, n - 1):
            assert study.window_position(token, window, overlap) == tuple(owners[token]), (n, window, token)


def test_the_grid_pairs_each_late_window_with_naive_at_the_same_size():
    systems = study.grid_systems("nomic-ai/nomic-embed-text-v1.5", [128, 256], [512, 2048], 256, 2048, "documents")
    tags = [dict(s.tags) for s in systems]
    # late arms come window by window, so one window's sizes re-pool the token states of one pass
    assert [(t["method"], t["size"], t["window"]) for t in tags] == [
        ("naive", 128, 0), ("naive", 256, 0), ("late", 128, 512), ("late", 256, 512), ("late", 128, 2048),
        ("late", 256, 2048)]
    assert all(s.aggregate == "max" for s in systems) and "max_length=512" in systems[2].retriever
    claims = study.grid_claims(["covid_qa"], [128, 256], [512, 2048], "nDCG@10", "documents", "nomic")
    labels = {s.display for s in systems}
    assert len(claims) == 4 and all(c.system in labels and c.baseline in labels for c in claims)


def test_the_gap_by_position_bins_each_question_by_where_its_answer_sits():
    import pandas as pd

    rows = []
    positions = {("s", 512): {"a": 10, "b": 300, "c": 500, "d": 20}}
    for qid, late_value in (("a", 1.0), ("b", 0.0), ("c", 0.0), ("d", 1.0)):
        rows += [{"part": "s", "size": 128, "window": 0, "method": "naive", "qid": qid, "measure": "m", "value": 1.0},
                 {"part": "s", "size": 128, "window": 512, "method": "late", "qid": qid, "measure": "m",
                  "value": late_value}]
    table = study.gap_by_position(pd.DataFrame(rows), positions, "m", bins=4, n_resamples=100)
    assert list(table["positions"]) == ["0–127", "256–383", "384–511"]
    assert list(table["n"]) == [2, 1, 1] and list(table["late − naive"]) == [0.0, -1.0, -1.0]


def test_grid_effects_reads_each_grid_contrast_from_the_verdict_table():
    import pandas as pd

    from grainlab.studies.late_chunking import grid_effects, paper_sweep_difference

    verdicts = pd.DataFrame([
        {"system": "late · 128 · w512 · documents", "part": "covid_qa", "measure": "nDCG@10", "effect": -0.1,
         "ci_low": -0.2, "ci_high": -0.05, "verdict": "not reproduced"},
        {"system": "late · fixed 256 tokens", "part": "scifact", "measure": "nDCG@10", "effect": 0.0,
         "ci_low": -0.01, "ci_high": 0.01, "verdict": "inconclusive"}])
    effects = grid_effects(verdicts)
    assert effects.to_dict("records") == [{"part": "covid_qa", "level": "documents", "size": 128, "window": 512,
                                           "measure": "nDCG@10", "effect": -0.1, "ci_low": -0.2, "ci_high": -0.05,
                                           "verdict": "not reproduced"}]
    (label, size, difference), = paper_sweep_difference()
    assert size == 256 and abs(difference - 0.019) < 1e-9  # 66.10 − 64.20 on SciFact
