"""The chunking study on a hand-made stitched dataset: AMI, answer spans, span metrics, parents."""

import pandas as pd
import pytest

from grainlab.data import Dataset, Document
from grainlab.data.stitch import stitch_documents
from grainlab.errors import ConfigError
from grainlab.experiments.chunking_study import (
    ChunkingSystem,
    answer_spans,
    gold_segments,
    run_chunking_study,
    segmentation_table,
)

TOPICS = {
    "a0": ("Volcanoes", "Volcanoes erupt when magma rises through the crust. Lava flows cool into basalt rock. "
                        "Ash clouds from eruptions can ground aircraft for days."),
    "a1": ("Volcanoes", "The largest volcano in the solar system is Olympus Mons on Mars. It is about three "
                        "times the height of Everest."),
    "b0": ("Violins", "A violin has four strings tuned in perfect fifths. The bow is strung with horsehair. "
                      "Stradivari built his finest violins in Cremona."),
    "b1": ("Violins", "Violinists rosin the bow so that it grips the strings. Vibrato gives the tone warmth."),
}
QUESTIONS = {"q1": ("Where did Stradivari build violins?", "b0", ["Cremona"]),
             "q2": ("What is the largest volcano in the solar system?", "a1", ["Olympus Mons"]),
             "q3": ("What is a violin bow strung with?", "b0", ["horsehair"])}


@pytest.fixture
def stitched():
    corpus = {d: Document(d, text, title) for d, (title, text) in TOPICS.items()}
    data = Dataset("toy", corpus, {q: t for q, (t, _, _) in QUESTIONS.items()},
                   {q: {d: 1} for q, (_, d, _) in QUESTIONS.items()}, {q: a for q, (_, _, a) in QUESTIONS.items()},
                   info={"article_of": {"a0": 0, "a1": 0, "b0": 1, "b1": 1}})
    return stitch_documents(data, min_chars=10_000)


def test_gold_segments_and_answer_spans(stitched):
    (doc_id, doc), = stitched.corpus.items()
    articles = gold_segments(stitched, "article")[doc_id]
    paragraphs = gold_segments(stitched, "paragraph")[doc_id]
    assert len(articles) == 2 and len(paragraphs) == 4
    assert doc.text[articles[1][0]:articles[1][1]].startswith("A violin has four strings")
    spans = answer_spans(stitched)
    assert [doc.text[s:e] for _, s, e in spans["q1"]] == ["Cremona"]
    with pytest.raises(ConfigError, match="stitched"):
        gold_segments(Dataset("plain", {}, {}, {}))


def test_ami_is_one_for_the_gold_cut_and_lower_for_windows(stitched, cache):
    table = segmentation_table(stitched, {"paragraphs": "recursive(size=40)", "windows": "fixed_tokens(size=24)"},
                               level="paragraph", cache=cache)
    ami = table.set_index("chunker")["ami"]
    assert ami["paragraphs"] == pytest.approx(1.0)  # recursive cuts at the "\n\n" between paragraphs
    assert ami["windows"] < 0.9


def test_study_measures_answers_spans_and_parents(stitched, cache, tmp_path):
    systems = [ChunkingSystem("fixed_tokens(size=16,overlap=0)", "bm25", "fixed 16"),
               ChunkingSystem("fixed_tokens(size=16,overlap=8)", "bm25", "fixed 16 overlap 8"),
               ChunkingSystem("parent_child(child_size=16,parent_size=64,parents=recursive)", "bm25", "parent-child",
                              parents=True)]
    study = run_chunking_study(stitched, systems, "toy", ks=(1, 2), results_dir=tmp_path, cache=cache)
    means = study.aggregate.pivot_table(index="system", columns="measure", values="mean")
    assert means.loc["fixed 16", "AnswerRecall@2"] == 1.0
    # span covered ⇒ answer found (the converse can fail: a chunk may hold the string elsewhere)
    pq = study.per_query.pivot_table(index=["system", "qid"], columns="measure", values="value")
    assert (pq["SpanCovered@1"] <= pq["AnswerRecall@1"]).all()
    assert ((pq["SpanIoU@1"] >= 0) & (pq["SpanIoU@1"] <= 1)).all()
    info = study.systems.set_index("system")
    assert info.loc["fixed 16", "n_units"] == info.loc["fixed 16", "formula_units"]
    assert info.loc["fixed 16 overlap 8", "duplication_rate"] > info.loc["fixed 16", "duplication_rate"] == 0
    assert info.loc["fixed 16 overlap 8", "boundary_retention"] >= info.loc["fixed 16", "boundary_retention"]
    assert means.loc["parent-child", "Tokens@1"] > means.loc["fixed 16", "Tokens@1"]  # parents are bigger
    assert info.loc["parent-child", "n_children"] > info.loc["parent-child", "n_units"]
    rerun = run_chunking_study(stitched, systems, "toy", ks=(1, 2), results_dir=tmp_path, cache=cache)
    pd.testing.assert_frame_equal(rerun.aggregate, study.aggregate)
    with pytest.raises(ConfigError, match="parent_child"):
        ChunkingSystem("recursive(size=16)", "bm25", "x", parents=True)
