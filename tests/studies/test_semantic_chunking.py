"""The semantic-chunking study on a hand-made stitched dataset: AMI, answer spans, span metrics and
parents through the one engine."""

import pandas as pd
import pytest

from grainlab.data import Dataset, Document
from grainlab.data.stitch import stitch_documents
from grainlab.errors import ConfigError
from grainlab.experiments import System, run_experiment
from grainlab.experiments.scoring import answer_spans
from grainlab.studies import semantic_chunking as study

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
    articles = study.gold_segments(stitched, "article")[doc_id]
    paragraphs = study.gold_segments(stitched, "paragraph")[doc_id]
    assert len(articles) == 2 and len(paragraphs) == 4
    assert doc.text[articles[1][0]:articles[1][1]].startswith("A violin has four strings")
    spans = answer_spans(stitched)
    assert [doc.text[s:e] for _, s, e in spans["q1"]] == ["Cremona"]
    with pytest.raises(ConfigError, match="stitched"):
        study.gold_segments(Dataset("plain", {}, {}, {}))


def test_ami_is_one_for_the_gold_cut_and_lower_for_windows(stitched, cache):
    table = study.segmentation_table(stitched, {"paragraphs": "recursive(size=40)",
                                                "windows": "fixed_tokens(size=24)"}, level="paragraph", cache=cache)
    ami = table.set_index("chunker")["ami"]
    assert ami["paragraphs"] == pytest.approx(1.0)  # recursive cuts at the "\n\n" between paragraphs
    assert ami["windows"] < 0.9


def test_engine_measures_answers_spans_and_parents(stitched, cache, tmp_path):
    systems = [*study.overlap_systems(16, [0, 8], "bm25"),
               *study.parent_child_systems({"parent-child": ("parent_child(child_size=16,parent_size=64,"
                                                             "parents=recursive)", True)}, "bm25")]
    result = run_experiment(stitched, systems, study.measures((1, 2)), name="toy", results_dir=tmp_path, cache=cache,
                            n_resamples=200, progress=False)
    means = result.aggregate.pivot_table(index="system", columns="measure", values="mean")
    assert means.loc["overlap 0", "AnswerRecall@2"] == 1.0
    # span covered ⇒ answer found (the converse can fail: a chunk may hold the string elsewhere)
    pq = result.per_query.pivot_table(index=["system", "qid"], columns="measure", values="value")
    assert (pq["SpanCovered@1"] <= pq["AnswerRecall@1"]).all()
    assert ((pq["SpanIoU@1"] >= 0) & (pq["SpanIoU@1"] <= 1)).all()
    info = result.systems.set_index("system")
    assert info.loc["overlap 0", "n_units"] == info.loc["overlap 0", "formula_units"]
    assert info.loc["overlap 8", "duplication_rate"] > info.loc["overlap 0", "duplication_rate"] == 0
    assert info.loc["overlap 8", "boundary_retention"] >= info.loc["overlap 0", "boundary_retention"]
    assert list(info["overlap"].iloc[:2]) == [0, 8]  # tags are columns of every table
    assert means.loc["parent-child", "Tokens@1"] > means.loc["overlap 0", "Tokens@1"]  # parents are bigger
    assert info.loc["parent-child", "n_children"] > info.loc["parent-child", "n_units"]
    rerun = run_experiment(stitched, systems, study.measures((1, 2)), name="toy", results_dir=tmp_path, cache=cache,
                           n_resamples=200, progress=False)
    pd.testing.assert_frame_equal(rerun.aggregate, result.aggregate)
    assert rerun.systems["reused"].all()
    with pytest.raises(ConfigError, match="parent_child"):
        System("bm25", "recursive(size=16)", "max", parents=True)


def test_report_rows_come_from_the_tables(stitched, cache, tmp_path):
    chunkers = {"fixed": "fixed_tokens(size=16,overlap=0)", "breakpoint (p95)": "sentences(n=1)",
                "Max–Min ≤256": "sentences(n=2)"}
    result = run_experiment(stitched, study.retrieval_systems(chunkers, {"BM25": "bm25"}), study.measures((1,)),
                            name="r", results_dir=tmp_path, cache=cache, n_resamples=200, progress=False)
    ami = study.segmentation_table(stitched, {"fixed": "fixed_tokens(size=24)", "Max–Min (no cap)": "sentences(n=1)"},
                                   cache=cache)
    sweep = ami.assign(threshold="0.6", gold=lambda t: t["dataset"] + " · " + t["level"])
    report = study.report(ami, sweep, result.aggregate, 1, "test", {"toy": stitched})
    rows = report.rows.set_index("claim")
    recall = result.aggregate.query("measure == 'AnswerRecall@1'").set_index("splitter")["mean"]
    qu = rows.loc["semantic chunking wins only on stitched documents (Qu et al. 2024)"]
    assert qu["ours"] == pytest.approx(max(recall["breakpoint (p95)"], recall["Max–Min ≤256"]) - recall["fixed"])
    assert rows.loc["Max–Min segments stitched documents best (AMI)", "ours"] == pytest.approx(
        ami.query("chunker == 'Max–Min (no cap)'")["ami"].mean())
    report.save(tmp_path)
    assert type(report).load(tmp_path).rows.shape == report.rows.shape


def test_size_matched_baselines_take_each_splitters_mean_length_and_are_tested_against_it(stitched, cache, tmp_path):
    """Qu et al.'s claims, method against method: each semantic splitter against fixed-size chunks
    of its own mean length (issue 60: 50-token Max–Min chunks were tested against 256-token windows)."""
    from grainlab.chunking import get_chunker
    from grainlab.experiments import chunk_corpus, size_matched_fixed

    chunkers = {"sentences": "sentences(n=1)", "fixed": "fixed_tokens(size=64,overlap=0)"}
    matched = size_matched_fixed(stitched, chunkers)
    units = chunk_corpus(stitched, get_chunker("sentences(n=1)"))
    mean = sum(u.n_tokens for u in units) / len(units)
    assert matched == {"sentences": f"fixed_tokens(size={round(mean)},overlap=0)"}  # fixed needs no baseline
    systems = study.matched_systems(matched, {"BM25": "bm25"})
    assert [(s.label, dict(s.tags)) for s in systems] == [
        ("fixed ≈ sentences · BM25", {"splitter": "fixed ≈ sentences", "retriever_label": "BM25",
                                     "matched_size": round(mean)})]
    result = run_experiment(stitched, study.retrieval_systems({"sentences": chunkers["sentences"]}, {"BM25": "bm25"})
                            + systems, study.measures([1]), name="matched", results_dir=tmp_path, cache=cache,
                            progress=False, n_resamples=50)
    claims = study.size_matched_claims(result.per_query, "AnswerRecall@1", ["toy_stitched"], [], ["sentences"])
    assert [(c.system, c.baseline, c.direction, dict(c.where)) for c in claims] == [
        ("sentences", "fixed ≈ sentences", 1, {"dataset": "toy_stitched", "retriever_label": "BM25"})]
    assert set(result.per_query["splitter"]) == {"sentences", "fixed ≈ sentences"}
