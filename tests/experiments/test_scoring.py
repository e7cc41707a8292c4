"""One measure list for the engine: ir-measures names and grainlab's, split, checked and scored."""

import pytest

from grainlab.data import Dataset, Document
from grainlab.errors import ConfigError
from grainlab.evaluation.registry import ANSWER_RECALL, SPAN_IOU, TOKENS
from grainlab.experiments.scoring import MeasureSet, Scorer
from grainlab.types import Chunk


def test_measure_set_splits_and_orders():
    parsed = MeasureSet.parse(["nDCG@10", "AnswerRecall@5", "Tokens@1", "AnswerRecall@1", "R@100"])
    assert parsed.ir == ("nDCG@10", "R@100")
    assert parsed.cutoffs(ANSWER_RECALL) == [1, 5] and parsed.depth == 5
    assert parsed.default == "nDCG@10"
    assert MeasureSet.parse(["Tokens@3", "AnswerRecall@1", "AnswerRecall@5"]).default == "AnswerRecall@5"
    assert MeasureSet.parse([SPAN_IOU @ 2]).names == ["SpanIoU@2"]
    assert MeasureSet.parse("nDCG@10").names == ["nDCG@10"]  # one name, never its characters (issue 35)
    for bad in ([], ["nDCG@10", "nDCG@10"], ["bogus@3"]):
        with pytest.raises(ConfigError):
            MeasureSet.parse(bad)


def test_scorer_rows_by_hand():
    text = "Paris is the capital of France. Berlin is the capital of Germany."
    data = Dataset("qa", {"d": Document("d", text)}, {"q": "capital of Germany"}, {"q": {"d": 1}}, {"q": ["Berlin"]})
    units = {"d#0": Chunk("d#0", "d", text[:31], 0, 31, 7, 0), "d#1": Chunk("d#1", "d", text[32:], 32, len(text), 7, 1)}
    scorer = Scorer(data, MeasureSet.parse([ANSWER_RECALL @ 1, ANSWER_RECALL @ 2, TOKENS @ 2, SPAN_IOU @ 1]))
    rows = scorer.rows({"q": [("d#0", 2.0), ("d#1", 1.0)]}, units).set_index("measure")["value"]
    assert rows["AnswerRecall@1"] == 0.0 and rows["AnswerRecall@2"] == 1.0
    assert rows["Tokens@2"] == 14.0 and rows["SpanIoU@1"] == 0.0
    documents = scorer.rows({"q": [("d", 1.0)]}, None).set_index("measure")["value"]
    assert documents["AnswerRecall@1"] == 1.0 and documents["Tokens@2"] > 10  # the whole document is read
    with pytest.raises(ConfigError, match="aggregate"):
        Scorer(data, MeasureSet.parse(["nDCG@10"])).check("units system", ranks_documents=False)


def test_span_variants_and_gold_spans_of_the_dataset():
    text = "Revenue rose. Costs fell. Revenue rose."
    second = text.index("Revenue rose.", 1)  # 26
    data = Dataset("fin", {"d": Document("d", text)}, {"q": "what rose?"}, {"q": {"d": 1}}, {"q": ["Revenue rose"]},
                   info={"gold_spans": {"q": [["d", 0, 12]]}})  # the excerpt at its first copy, as Chroma's offsets
    units = {"d#0": Chunk("d#0", "d", text[:second - 1], 0, second - 1, 8, 0),
             "d#1": Chunk("d#1", "d", text[second:], second, len(text), 8, 1)}
    names = ["SpanRecall@1", "SpanRecall(match=any_copy)@1", "SpanPrecision(unit=char)@1",
             "SpanPrecision(count=sum,unit=char)@2", "SpanPrecisionOmega(unit=char)"]
    scorer = Scorer(data, MeasureSet.parse(names))
    rows = scorer.rows({"q": [("d#1", 2.0), ("d#0", 1.0)]}, units).set_index("measure")["value"]
    assert rows["SpanRecall@1"] == 0.0  # the second copy is not the gold excerpt's offsets ...
    assert rows["SpanRecall(match=any_copy)@1"] == 1.0  # ... unless chunks sit at their text's first copy
    assert rows["SpanPrecision(unit=char)@1"] == 0.0
    assert rows["SpanPrecision(count=sum,unit=char)@2"] == pytest.approx(12 / (25 + 13))
    assert rows["SpanPrecisionOmega(unit=char)"] == pytest.approx(12 / 25)  # only d#0 touches the gold


def test_citation_match_divides_by_the_units_shown_not_by_k():
    """CitationMatch@k is the share of the units a question is shown that overlap its evidence:
    with two units shown at k = 5, one matching, it is 1/2, not 1/5."""
    text = "Refunds take five days. Shipping takes two. Support answers fast."
    data = Dataset("c", {"d": Document("d", text)}, {"q": "refunds?"}, {"q": {"d": 1}}, {"q": ["Refunds take five days"]},
                   info={"gold_spans": {"q": [["d", 0, 22]]}})
    units = {"d#0": Chunk("d#0", "d", text[:23], 0, 23, 5, 0), "d#1": Chunk("d#1", "d", text[24:43], 24, 43, 4, 1)}
    scorer = Scorer(data, MeasureSet.parse(["CitationMatch@5", "SpanHit@5", "SpanRR@5"]))
    rows = scorer.rows({"q": [("d#1", 2.0), ("d#0", 1.0)]}, units).set_index("measure")["value"]
    assert rows["CitationMatch@5"] == 0.5 and rows["SpanHit@5"] == 1.0 and rows["SpanRR@5"] == 0.5


def test_a_span_that_ends_at_the_end_of_its_document_is_evidence(tmp_path):
    import json

    from grainlab.data.documents import load_documents
    from grainlab.data.evidence import load_questions

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Refunds take five days", encoding="utf-8")  # no final newline
    docs = load_documents(tmp_path / "docs")
    end = len(docs[0].text)
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps({"id": "q", "question": "?", "document_id": "a", "start": end - 4, "end": end}) + "\n")
    assert load_questions(path, docs)[0].spans == (("a", end - 4, end),)
