"""ir-measures through our wrapper, on tiny inline qrels and runs with hand-computed values."""

import math

import ir_measures
import pytest

from grainlab.errors import ConfigError, MalformedData
from grainlab.evaluation import evaluate_run, read_trec_run, write_trec_run

QRELS = {"q1": {"d1": 1, "d2": 1, "d9": 0}, "q2": {"d5": 2}, "q3": {"d7": 1}}
RUN = {"q1": [("d3", 3.0), ("d1", 2.0), ("d2", 1.0)], "q2": [("d5", 9.0), ("d6", 1.0)]}


def values(table):
    return {(r.qid, r.measure): r.value for r in table.itertuples()}


def test_hand_computed_values():
    got = values(evaluate_run(RUN, QRELS, ["nDCG@10", "RR", "P@1", "R@2"]))
    ideal = 1 + 1 / math.log2(3)
    assert got[("q1", "nDCG@10")] == pytest.approx((1 / math.log2(3) + 1 / math.log2(4)) / ideal)
    assert got[("q1", "RR")] == pytest.approx(0.5)
    assert got[("q1", "P@1")] == 0.0
    assert got[("q1", "R@2")] == pytest.approx(0.5)
    assert got[("q2", "nDCG@10")] == pytest.approx(1.0)
    assert got[("q2", "RR")] == 1.0


def test_unanswered_judged_queries_count_as_zero():
    got = values(evaluate_run(RUN, QRELS, ["nDCG@10"]))
    assert got[("q3", "nDCG@10")] == 0.0
    assert len(got) == 3


def test_unknown_measure_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown measure 'nDCG@ten'"):
        evaluate_run(RUN, QRELS, ["nDCG@ten"])


def test_trec_run_round_trip(tmp_path):
    path = tmp_path / "run.txt"
    write_trec_run(RUN, str(path))
    assert read_trec_run(str(path)) == RUN


def test_malformed_run_line_is_named(tmp_path):
    path = tmp_path / "run.txt"
    path.write_text("q1 Q0 d1 1 2.0 tag\nq1 Q0 d2 2\n")
    with pytest.raises(MalformedData, match=r"run.txt:2: expected"):
        read_trec_run(str(path))


def test_self_hits_are_dropped_only_when_asked_as_for_arguana():
    qrels = {"q1": {"d1": 1}}
    run = {"q1": [("q1", 9.0), ("d1", 1.0)]}
    assert values(evaluate_run(run, qrels, ["P@1"], ignore_identical_ids=True))[("q1", "P@1")] == 1.0
    assert values(evaluate_run(run, qrels, ["P@1"]))[("q1", "P@1")] == 0.0  # the default: an ordinary document


def test_a_document_sharing_its_query_id_counts_as_ir_measures_counts_it():
    """Issue 35: document ``1`` ranked first for query ``1`` scored nDCG@10 0.5, not 1.0."""
    qrels = {"1": {"1": 1, "7": 1}}
    run = {"1": [("1", 2.0), ("7", 1.0)]}
    reference = {q: dict(ranking) for q, ranking in run.items()}
    expected = {m.query_id: m.value for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, reference)}
    assert values(evaluate_run(run, qrels, ["nDCG@10"]))[("1", "nDCG@10")] == expected["1"] == 1.0


def test_an_unanswered_or_empty_query_scores_zero_not_missing():
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": [("d1", 1.0)], "q3": []}  # q2 absent, q3 answered with nothing
    table = evaluate_run(run, qrels, ["nDCG@10", "R@100", "P@1"])
    by_query = table.pivot(index="qid", columns="measure", values="value")
    assert list(by_query.index) == ["q1", "q2", "q3"]
    assert (by_query.loc["q1"] == 1.0).all() and (by_query.loc[["q2", "q3"]] == 0.0).all().all()
