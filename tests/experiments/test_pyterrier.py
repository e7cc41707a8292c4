"""grainlab for PyTerrier users (issue 58): runs as result frames, a system as a transformer, and
``pt.Experiment`` over grainlab systems giving the nDCG@10 grainlab reports."""

import pandas as pd
import pytest

pt = pytest.importorskip("pyterrier")

from grainlab.data import load_dataset, sample_dataset  # noqa: E402
from grainlab.experiments import System, run_experiment  # noqa: E402
from grainlab.experiments.pyterrier import qrels_frame, run_frame, topics_frame, transformer  # noqa: E402


def test_a_run_is_pyterriers_result_frame():
    frame = run_frame({"q1": [("d2", 3.0), ("d1", 1.5)], "q2": [("d9", 0.1)]}, {"q1": "one", "q2": "two"})
    assert list(frame.columns) == ["qid", "query", "docno", "score", "rank"]
    assert frame.to_dict("records") == [
        {"qid": "q1", "query": "one", "docno": "d2", "score": 3.0, "rank": 0},
        {"qid": "q1", "query": "one", "docno": "d1", "score": 1.5, "rank": 1},
        {"qid": "q2", "query": "two", "docno": "d9", "score": 0.1, "rank": 0}]


@pytest.mark.mirror
def test_pt_experiment_over_grainlab_systems_gives_grainlabs_ndcg(mirror, tmp_path):
    """A chunked BM25 system and a whole-document BM25 baseline on a SciFact sample, scored by
    pt.Experiment and by run_experiment. (PyTerrier's own BM25 is Terrier's, which needs its Java
    jars from Maven: not reachable offline.)"""
    data = sample_dataset(load_dataset("scifact", mirror=str(mirror), allow_download=False), 40, 300, 0)
    systems = [System("bm25", "none", "max"), System("bm25", "fixed_tokens(size=64,overlap=0)", "max")]
    ours = run_experiment(data, systems, ["nDCG@10"], name="pt", results_dir=tmp_path, progress=False,
                          n_resamples=50)
    theirs = pt.Experiment([transformer(data, s, k=100) for s in systems], topics_frame(data), qrels_frame(data),
                           eval_metrics=[pt.measures.nDCG @ 10], names=[s.display for s in systems])
    grainlab = ours.aggregate.set_index("system")["mean"]
    pyterrier = theirs.set_index("name")[str(pt.measures.nDCG @ 10)]
    assert set(pyterrier.index) == set(grainlab.index)
    for name in grainlab.index:
        assert pyterrier[name] == pytest.approx(grainlab[name], abs=1e-9), name
    assert pyterrier.iloc[0] != pytest.approx(pyterrier.iloc[1])  # two different systems, not one scored twice
    assert isinstance(theirs, pd.DataFrame)
