"""grainlab's own measures: one canonical name each, used by every table that reports them."""

import pytest

from grainlab.errors import ConfigError
from grainlab.evaluation import evaluate_run
from grainlab.evaluation.answers import answer_recall
from grainlab.evaluation.measures import parse_measures
from grainlab.evaluation.registry import ANSWER_RECALL, REGISTRY, parse_grainlab_measure


def test_canonical_names_and_parsing():
    assert ANSWER_RECALL @ 5 == ANSWER_RECALL.at(5) == "AnswerRecall@5"
    assert parse_grainlab_measure("SpanIoU@3")[:2] == (REGISTRY["SpanIoU"], 3)
    assert parse_grainlab_measure("nDCG@10") is None
    for bad in (0, -1, True, 2.5):
        with pytest.raises(ConfigError, match="positive integer"):
            ANSWER_RECALL.at(bad)
    assert all(m.source and m.description for m in REGISTRY.values())


def test_tables_use_the_registered_names():
    table = answer_recall({"q": [("u", 1.0)]}, {"u": "Paris is big"}, {"q": ["Paris"]}, [1, 3])
    assert set(table["measure"]) == {ANSWER_RECALL @ 1, ANSWER_RECALL @ 3}
    assert all(parse_grainlab_measure(m) for m in table["measure"])


def test_ir_measures_and_grainlab_measures_do_not_mix_silently():
    with pytest.raises(ConfigError, match="is a grainlab measure"):
        parse_measures(["nDCG@10", "AnswerRecall@5"])
    assert len(evaluate_run({"q": [("d", 1.0)]}, {"q": {"d": 1}}, ["nDCG@10"])) == 1


def test_measures_that_score_no_ranking_are_refused_by_name():
    with pytest.raises(ConfigError, match="generation"):
        parse_grainlab_measure("EM@5")
    assert REGISTRY["BestSubspanEM"].scores == "generation" and REGISTRY["BoundaryRetention"].scores == "chunking"


def test_parameters_have_one_canonical_spelling():
    from grainlab.evaluation.registry import SPAN_IOU, SPAN_PRECISION_OMEGA

    parsed = parse_grainlab_measure("SpanIoU(match=any_copy, count=sum)@5")
    assert parsed.params == {"count": "sum", "unit": "token", "match": "any_copy"}
    assert parsed.name == SPAN_IOU.at(5, count="sum", match="any_copy") == "SpanIoU(count=sum,match=any_copy)@5"
    assert parse_grainlab_measure("SpanIoU(unit=token)@5").name == "SpanIoU@5"  # defaults are left out
    assert parse_grainlab_measure("SpanPrecisionOmega(unit=char)").name == SPAN_PRECISION_OMEGA.at(unit="char")
    for bad, message in [("SpanIoU(count=mean)@5", "count must be one of"), ("SpanIoU(size=3)@5", "no parameter"),
                         ("SpanPrecisionOmega@5", "no cutoff"), ("SpanIoU", "positive integer")]:
        with pytest.raises(ConfigError, match=message):
            parse_grainlab_measure(bad)
