"""Each study's report is computed from the result tables it is given (hand-made tables here)."""

import pandas as pd
import pytest

from grainlab.studies import chunk_size, late_chunking, longrag, lost_in_the_middle


def test_chunk_size_systems_and_best_size():
    systems = chunk_size.systems(["bm25"], [64, 512], "cl100k_base", None)
    assert [dict(s.tags) for s in systems] == [{"chunk_size": 64, "retriever_label": "BM25"},
                                                {"chunk_size": 512, "retriever_label": "BM25"}]
    aggregate = pd.DataFrame({"dataset": ["squad_dev_stitched"] * 2, "measure": ["AnswerRecall@5"] * 2,
                              "retriever_label": ["BM25"] * 2, "chunk_size": [64, 512], "mean": [0.7, 0.5],
                              "retriever": ["bm25"] * 2})
    gates = pd.DataFrame([{"retriever": "BM25", "measure": "nDCG@10", "ours": 0.68, "expected": 0.68,
                           "tolerance": 0.02, "pass": True}])
    report = chunk_size.report(aggregate, {"squad_dev_stitched": "AnswerRecall@5"}, gates, "note")
    row = report.rows.iloc[0]
    assert row["ours"] == "best at 64 tokens" and row["64"] == 0.7 and row["512"] == 0.5
    assert ".642/.609" in row["paper"] and "sanity gates" in report.note


def test_chunk_size_optimum_shift_compares_best_sizes_and_counts_significant_larger_sizes():
    rows = [("a", "MiniLM", 128, 0.70), ("a", "MiniLM", 256, 0.72), ("a", "MiniLM", 512, 0.60),
            ("a", "long", 128, 0.70), ("a", "long", 256, 0.71), ("a", "long", 512, 0.75),
            ("a", "BM25", 512, 0.99),  # lexical: not a context-length question
            ("b", "MiniLM", 256, 0.50), ("b", "MiniLM", 512, 0.55), ("b", "long", 256, 0.60),
            ("b", "long", 512, 0.58)]
    aggregate = pd.DataFrame(rows, columns=["dataset", "retriever_label", "chunk_size", "mean"]).assign(
        measure="AnswerRecall@5")
    tests = pd.DataFrame([{"dataset": "a", "retriever_label": "long", "chunk_size": 512, "delta": 0.04,
                           "p_randomization_holm": 0.01},
                          {"dataset": "b", "retriever_label": "long", "chunk_size": 512, "delta": -0.02,
                           "p_randomization_holm": 0.01}])
    shift = chunk_size.optimum_shift(aggregate, tests, "AnswerRecall@5", ["long"]).set_index("dataset")
    assert shift.loc["a", "best_size"] == 512 and bool(shift.loc["a", "moved_larger"])
    assert shift.loc["a", "short_context_best"] == "MiniLM: 256"
    assert shift.loc["a", "larger_sizes_significantly_better"] == "1 of 1"
    assert shift.loc["b", "best_size"] == 256 and not shift.loc["b", "moved_larger"]
    assert shift.loc["b", "larger_sizes_significantly_better"] == "0 of 1"  # significant, but worse


def test_late_chunking_report_carries_the_paired_test():
    scores = pd.Series({"no chunking": 0.60, "naive · fixed 256 tokens": 0.61, "late · fixed 256 tokens": 0.63})
    test = pd.DataFrame([{"system": "late · fixed 256 tokens", "delta": 0.02, "p_randomization": 0.01,
                          "p_randomization_holm": 0.04}])
    rows = late_chunking.report(scores, test, "note").rows.set_index("arm")
    # one Holm p per claim, the verdict table's: the study table shows the unadjusted p, so named
    assert rows.loc["late · fixed 256 tokens", "p (randomization, unadjusted)"] == 0.01
    assert not any("Holm" in column for column in rows.columns)
    assert rows.loc["late · fixed 256 tokens", "ours"] == 63.0 and rows.loc["late · fixed 256 tokens", "paper"] == 66.10
    assert rows.loc["late · fixed 256 tokens", "delta vs naive"] == 2.0
    assert pd.isna(rows.loc["no chunking", "delta vs naive"])


def test_longrag_recall_table_and_report():
    aggregate = pd.DataFrame({"unit": ["documents"] * 4, "retriever_label": ["bge-small · MaxP 512"] * 4,
                              "corpus_size": [10] * 4, "measure": ["AnswerRecall@1", "Tokens@1", "AnswerRecall@5",
                                                                   "Tokens@5"], "mean": [0.5, 800.0, 0.9, 4000.0]})
    table = longrag.recall_table(aggregate)
    assert table.to_dict("records")[0] == {"unit": "documents", "retriever": "bge-small · MaxP 512", "corpus size": 10,
                                           "units retrieved": 1, "avg tokens": 800.0, "answer recall": 0.5}
    reader = pd.DataFrame([{"model": "Qwen/Qwen2.5-Coder-0.5B-Instruct", "setting": "documents", "n": 4, "em": 0.25,
                            "em_low": 0.0, "em_high": 0.75, "answer_in_long": 0.5, "context_has_answer": 0.75}])
    rows = longrag.report(table, reader, "note").rows
    at1 = rows[(rows["unit"] == "documents") & (rows["units retrieved"] == 1)].iloc[0]
    assert at1["paper"] == 69.45 and at1["ours"] == 50.0
    last = rows.iloc[-1]
    assert last["ours"] == 25.0 and last["95% CI"] == "0.0–75.0" and last["reader"] == "Qwen2.5-Coder-0.5B-Instruct"


def test_longrag_confidence_separates_right_from_wrong_answers():
    assert longrag.confidence([0.0, 0.0]) == 1.0 and pd.isna(longrag.confidence(None))
    assert longrag.confidence([-1.0, -3.0]) == pytest.approx(2.718281828 ** -2)
    rows = pd.DataFrame({"model": "m", "setting": "documents", "em": [1, 1, 0, 0, 0],
                         "confidence": [0.9, 0.8, 0.85, 0.3, float("nan")]})
    table = longrag.confidence_table(rows).iloc[0]
    assert table["n"] == 4 and table["right"] == 2
    assert table["confidence when right"] == pytest.approx(0.85) and table["confidence when wrong"] == pytest.approx(0.575)
    assert table["AUROC"] == pytest.approx(3 / 4)  # of the 4 right–wrong pairs, 3 rank the right answer higher


def test_lost_in_the_middle_report_pairs_positions_with_the_paper():
    summary = pd.DataFrame([{"setting": "10 documents", "position": 1, "accuracy": 0.5, "ci_low": 0.4,
                             "ci_high": 0.6, "n": 10},
                            {"setting": "closed-book", "position": 0, "accuracy": 0.2, "ci_low": 0.1,
                             "ci_high": 0.3, "n": 10}])
    kv = pd.DataFrame([{"setting": "25 keys", "position": 1, "accuracy": 1.0, "ci_low": 1.0, "ci_high": 1.0, "n": 4}])
    rows = lost_in_the_middle.report(summary, kv, "note").rows
    assert rows["paper"].tolist()[:2] == [pytest.approx(0.768), pytest.approx(0.561)]
    assert rows["ours"].tolist() == [0.5, 0.2, 1.0]


def test_chunk_size_claims_follow_the_paper_and_skip_sets_without_both_sizes():
    import pandas as pd

    from grainlab.studies import chunk_size

    rows = pd.DataFrame([{"dataset": d, "retriever_label": "BM25", "chunk_size": s, "qid": "q", "measure": "m",
                          "value": 0.5} for d, sizes in (("squad_dev_stitched", (128, 512)),
                                                         ("covid_qa_stitched", (128, 512)),
                                                         ("nq_open_oracle_stitched", (64, 256)), ("scifact", (128, 512)))
                         for s in sizes])
    claims = chunk_size.claims(rows, "m")
    assert [(c.where["dataset"], c.system, c.baseline, c.direction) for c in claims] == [
        ("squad_dev_stitched", 128, 512, 1), ("covid_qa_stitched", 512, 128, 1)]


def _sizes_table(datasets, retriever="all-MiniLM-L6-v2", per_doc=4, docs=8, gap=0.3):
    import pandas as pd

    rows = []
    for dataset in datasets:
        for d in range(docs):
            for j in range(per_doc):
                qid = f"{d}-{j}"
                for size, value in ((128, 0.5 + gap), (256, 0.5), (512, 0.5), (1024, 0.5)):
                    rows.append({"dataset": dataset, "retriever_label": retriever, "chunk_size": size, "qid": qid,
                                 "measure": "AnswerRecall@5", "value": value})
    return pd.DataFrame(rows)


def test_each_set_is_tested_in_the_direction_the_papers_table_gives_it():
    """Bhat et al.'s Table 2 has SQuAD best at small chunks and NQ best at large ones (Recall@1
    .172/.150 at 64 tokens, .349/.477 at 1,024); the abstract puts COVID-QA with the large-chunk
    sets. Our NQ-open oracle passages are named as not the paper's NQ documents."""
    per_query = _sizes_table(["squad_dev_stitched", "nq_open_oracle_stitched", "covid_qa_stitched"])
    claims = {c.where["dataset"]: c for c in chunk_size.claims(per_query, "AnswerRecall@5")}
    assert (claims["squad_dev_stitched"].system, claims["squad_dev_stitched"].baseline) == (128, 512)
    assert (claims["nq_open_oracle_stitched"].system, claims["nq_open_oracle_stitched"].baseline) == (512, 128)
    assert (claims["covid_qa_stitched"].system, claims["covid_qa_stitched"].baseline) == (512, 128)
    assert ".172/.150" in claims["nq_open_oracle_stitched"].paper
    assert "not the paper's NQ documents" in claims["nq_open_oracle_stitched"].deviation
    assert chunk_size.PAPER_BEST["nq_open_oracle_stitched"] == (512, 1024)


def test_long_encoder_size_tests_flip_whole_stitched_documents():
    """8 stitched documents: a cluster sign-flip test cannot go below 2/256, so 3 contrasts × Holm
    leave even a gap in every document at p ≥ 0.0078; question-level tests over the 32 questions
    would call it p ≈ 0.0001."""
    per_query = _sizes_table(["squad_dev_stitched"], gap=-0.3)
    clusters = {"squad_dev_stitched": {f"{d}-{j}": f"doc{d}" for d in range(8) for j in range(4)}}
    flat = chunk_size.size_contrasts(per_query, "AnswerRecall@5", 128, [256, 512, 1024], n_resamples=2000)
    clustered = chunk_size.size_contrasts(per_query, "AnswerRecall@5", 128, [256, 512, 1024], n_resamples=2000,
                                          clusters=clusters)
    assert (flat["p_randomization"] < 0.001).all()
    assert (clustered["p_randomization"] >= 2 / 256 - 1e-12).all() and set(clustered["clusters"]) == {8}
    assert (clustered["p_randomization_holm"] >= 3 * 2 / 256 - 1e-12).all()
