"""Fusion against the worked example, a pandas computation and ranx."""

import numpy as np
import pandas as pd
import pytest

from grainlab.errors import ConfigError
from grainlab.retrieval.fusion import rrf, score_fusion

BM25 = {"q": [("A", 12.0), ("X", 9.0), ("B", 7.5)]}
DENSE = {"q": [("C", 0.9), ("B", 0.8), ("Y", 0.1)]}


def test_worked_example():
    fused = dict(rrf([BM25, DENSE], k=60)["q"])
    assert fused["B"] == pytest.approx(1 / 63 + 1 / 62)
    assert round(fused["B"], 5) == 0.03200
    assert rrf([BM25, DENSE])["q"][0][0] == "B"
    assert fused["A"] == pytest.approx(1 / 61) and fused["C"] == pytest.approx(1 / 61)


def test_duplicate_ids_are_an_error():
    with pytest.raises(ConfigError, match="lists 'A' twice"):
        rrf([{"q": [("A", 1.0), ("A", 0.5)]}])


def test_missing_query_in_one_run_and_weights():
    fused = rrf([BM25, {"other": [("Z", 1.0)]}], k=0, weights=[2.0, 1.0])
    assert dict(fused["q"])["A"] == pytest.approx(2.0) and fused["other"] == [("Z", 1.0)]
    with pytest.raises(ConfigError):
        rrf([BM25], weights=[1.0, 2.0])


def random_runs(seed, n_runs=3, n_queries=5, pool=30, depth=15):
    rng = np.random.default_rng(seed)
    runs = []
    for _ in range(n_runs):
        run = {}
        for q in range(n_queries):
            docs = rng.choice(pool, size=depth, replace=False)
            scores = np.sort(rng.normal(size=depth))[::-1] * rng.uniform(0.5, 20)
            run[f"q{q}"] = [(f"d{d}", float(s)) for d, s in zip(docs, scores)]
        runs.append(run)
    return runs


def pandas_fusion(runs, kind, k=60):
    frames = []
    for i, run in enumerate(runs):
        for qid, ranking in run.items():
            frame = pd.DataFrame(ranking, columns=["doc", "score"])
            frame["rank"] = np.arange(1, len(frame) + 1)
            frame["qid"], frame["run"] = qid, i
            frames.append(frame)
    data = pd.concat(frames)
    if kind == "rrf":
        data["part"] = 1 / (k + data["rank"])
    elif kind == "minmax":
        g = data.groupby(["qid", "run"])["score"]
        data["part"] = (data["score"] - g.transform("min")) / (g.transform("max") - g.transform("min"))
    else:
        g = data.groupby(["qid", "run"])["score"]
        data["part"] = (data["score"] - g.transform("mean")) / g.transform(lambda s: s.std(ddof=0))
    return data.groupby(["qid", "doc"])["part"].sum()


@pytest.mark.parametrize("kind", ["rrf", "minmax", "zscore"])
def test_matches_pandas(kind):
    runs = random_runs(1)
    ours = rrf(runs, k=60) if kind == "rrf" else score_fusion(runs, kind)
    reference = pandas_fusion(runs, kind)
    for qid, ranking in ours.items():
        assert len(ranking) == reference.loc[qid].shape[0]
        for doc, score in ranking:
            assert score == pytest.approx(reference[(qid, doc)])
        assert [s for _, s in ranking] == sorted((s for _, s in ranking), reverse=True)


@pytest.mark.slow
@pytest.mark.long  # ranx compiles numba kernels (67 s cold in CI): `make test-long`; the pandas reference stays in every suite
def test_matches_ranx():
    ranx = pytest.importorskip("ranx")
    runs = random_runs(2)
    ranx_runs = [ranx.Run({q: dict(r) for q, r in run.items()}, name=f"r{i}") for i, run in enumerate(runs)]
    for ours, theirs in [(rrf(runs, k=60), ranx.fuse(ranx_runs, method="rrf", params={"k": 60})),
                         (score_fusion(runs, "minmax"),
                          ranx.fuse(ranx_runs, norm="min-max", method="sum"))]:
        theirs = theirs.to_dict()
        for qid, ranking in ours.items():
            for doc, score in ranking:
                assert score == pytest.approx(theirs[qid][doc], rel=1e-6)
