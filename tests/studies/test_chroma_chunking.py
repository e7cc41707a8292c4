"""The Chroma study on a hand-made two-corpus set: both conventions, size-matched baselines, report."""

import pytest

from grainlab.data import Dataset, Document
from grainlab.experiments import run_experiment, size_matched_fixed
from grainlab.studies import chroma_chunking as study

TEXT = ("Revenue grew in the third quarter. Costs were flat. " * 8 + "\n\n"
        + "The board approved a dividend. Shares rose sharply. " * 8)


@pytest.fixture
def data():
    corpus = {"finance": Document("finance", TEXT), "chat": Document("chat", "hello there. how are you? " * 20)}
    start = TEXT.index("The board approved a dividend.")
    spans = {"q0": [("finance", start, start + 30)], "q1": [("finance", 0, 34)]}
    return Dataset("chroma_toy", corpus, {"q0": "who approved a dividend?", "q1": "did revenue grow?"},
                   {"q0": {"finance": 1}, "q1": {"finance": 1}},
                   {q: [TEXT[s:e] for _, s, e in v] for q, v in spans.items()}, info={"gold_spans": spans})


def test_study_runs_both_conventions_and_size_matched_baselines(data, tmp_path, cache):
    chunkers = {"Recursive 200, overlap 0": "recursive_separators(size=24)",
                "TokenText 250, overlap 125": "fixed_tokens(size=24,overlap=12)"}
    matched = size_matched_fixed(data, chunkers)
    assert list(matched) == ["Recursive 200, overlap 0"] and matched["Recursive 200, overlap 0"].startswith("fixed_tokens")
    result = run_experiment(data, study.systems(chunkers, {"BM25": "bm25"}, matched), study.measures(),
                            name="chroma", results_dir=tmp_path, cache=cache, n_resamples=200, progress=False)
    means = result.aggregate.set_index(["chunker_label", "measure"])["mean"]
    overlapping = "TokenText 250, overlap 125"
    # overlapping windows pay twice in Chroma's precision, once in the deduplicated one
    assert means[(overlapping, study.measure_name("precision", "chroma"))] < \
        means[(overlapping, study.measure_name("precision", "deduplicated"))]
    assert means[(overlapping, study.measure_name("recall", "chroma"))] == pytest.approx(
        means[(overlapping, study.measure_name("recall", "deduplicated"))])
    versus = study.versus_matched(result.per_query, matched, ["BM25"], study.measure_name("iou", "chroma"),
                                  n_resamples=200)
    assert versus["baseline"].tolist() == ["fixed ≈ Recursive 200, overlap 0 · BM25"]
    assert {"ci_low", "ci_high", "p_randomization_holm"} <= set(versus.columns)
    report = study.report(result.aggregate, "BM25", "note")
    rows = report.rows.set_index("claim")
    mine = rows.loc["Recursive 200, overlap 0 (all-MiniLM-L6-v2)"]
    assert mine["paper"] == "75.7 / 6.5 / 6.5" and mine["ours"].count("/") == 2
    assert rows.loc["ClusterSemantic 200 (text-embedding-3-large)", "ours"].startswith("not run")
    assert rows.loc["ClusterSemantic 200 (all-MiniLM-L6-v2)", "ours"] == "not in this profile"
    assert set(study.with_corpus(result.per_query, data)["corpus"]) == {"finance"}


def test_recall_precision_points_in_percent_by_family_beside_the_reports_points():
    import pandas as pd

    from grainlab.studies.chroma_chunking import measure_name, recall_precision_points

    rows = [{"retriever_label": "all-MiniLM-L6-v2", "chunker_label": label, "measure": str(measure_name(kind, "chroma")),
             "mean": value}
            for label, recall, precision in (("TokenText 250, overlap 0", 0.77, 0.04),
                                              ("fixed ≈ Recursive 200, overlap 0", 0.74, 0.06))
            for kind, value in (("recall", recall), ("precision", precision))]
    rows.append({"retriever_label": "other", "chunker_label": "TokenText 250, overlap 0",
                 "measure": str(measure_name("recall", "chroma")), "mean": 0.1})
    ours, paper = recall_precision_points(pd.DataFrame(rows), "all-MiniLM-L6-v2")
    assert ours.to_dict("records") == [
        {"label": "TokenText 250, overlap 0", "precision": 4.0, "recall": 77.0, "family": "TokenText"},
        {"label": "fixed ≈ Recursive 200, overlap 0", "precision": 6.0, "recall": 74.0, "family": "size-matched fixed"}]
    report = paper.set_index("label")
    assert report.loc["TokenText 250, overlap 0"].tolist() == [3.3, 77.1]  # the report's MiniLM column
    assert "TokenText 800, overlap 400" not in report.index  # reported for text-embedding-3-large only
