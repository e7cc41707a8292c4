"""Measures shown to a person by a label from one place (issue 57), never by their spec string."""

import pandas as pd
import pytest

from grainlab.evaluation.labels import measure_label
from grainlab.publish import html_table
from grainlab.studies.report import human_header


@pytest.mark.parametrize("name, label", [
    ("SpanRecall(count=sum,unit=char,match=any_copy)@5", "span recall@5 (summed over chunks, characters, any copy)"),
    ("SpanIoU@5", "span IoU@5"),  # default parameters say nothing
    ("AnswerRecall@20", "answer recall@20"),
    ("SpanHit@5", "hit@5"),
    ("SpanRR@10", "MRR@10"),
    ("Tokens@5", "tokens read@5"),
    ("nDCG@10", "nDCG@10"),
    ("R@100", "recall@100"),
    ("RR@10", "MRR@10"),
    ("ami", "ami"),  # not a measure: unchanged
    ("AnswerRecall", "AnswerRecall"),  # no cutoff: not a measure name
])
def test_each_measure_has_a_readers_label(name, label):
    assert measure_label(name) == label


def test_reports_show_labels_in_headers_and_measure_cells_not_spec_strings():
    spec = "SpanRecall(count=sum,unit=char,match=any_copy)@5"
    assert human_header(spec) == measure_label(spec) and human_header("p_holm") == "p (Holm)"
    html = html_table(pd.DataFrame({"measure": [spec], spec: [0.5], "retriever_label": ["BM25"]}))
    assert "count=sum" not in html and html.count("span recall@5 (summed over chunks, characters, any copy)") == 2
    assert "<th>retriever</th>" in html
