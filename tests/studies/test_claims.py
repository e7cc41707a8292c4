"""Claims tested on paired per-query scores: the verdict follows the data, never a typed word."""

import numpy as np
import pandas as pd
import pytest

from grainlab.errors import ConfigError, DuplicateContrastWarning
from grainlab.evaluation.significance import holm, randomization_test
from grainlab.studies.claims import (
    Claim,
    paired_scores,
    verdict_counts,
    verdict_table,
    with_samples,
)
from grainlab.studies.report import Report


def _per_query(shift: float, n: int = 80, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.uniform(0.2, 0.8, n)
    rows = []
    for i, value in enumerate(base):
        rows += [{"qid": f"q{i}", "system": "small", "dataset": "a", "measure": "m", "value": value + shift},
                 {"qid": f"q{i}", "system": "large", "dataset": "a", "measure": "m", "value": value},
                 {"qid": f"q{i}", "system": "small", "dataset": "b", "measure": "m", "value": value},
                 {"qid": f"q{i}", "system": "large", "dataset": "b", "measure": "m", "value": value + rng.normal(0, .2)}]
    return pd.DataFrame(rows)


def test_verdicts_follow_direction_and_significance():
    data = _per_query(0.05)
    claims = [Claim("small wins on a", "p", "small", "large", "m", +1, where={"dataset": "a"}),
              Claim("small wins on b", "p", "small", "large", "m", +1, paper_effect=0.05, where={"dataset": "b"})]
    opposite = Claim("large wins on a", "p", "small", "large", "m", -1, where={"dataset": "a"})
    table = verdict_table(data, claims, n_resamples=2000)
    assert list(table["verdict"]) == ["reproduced", "inconclusive"]
    # the opposite claim on the same contrast belongs to another family (one family holds it once)
    assert verdict_table(data, [opposite, claims[1]], n_resamples=2000)["verdict"].iloc[0] == "not reproduced"
    assert table.loc[0, "effect"] == pytest.approx(0.05)
    assert table.loc[0, "ci_low"] - 1e-9 <= 0.05 <= table.loc[0, "ci_high"] + 1e-9
    assert set(table["n"]) == {80}
    assert table.loc[1, "queries_needed"] > 80  # noise σ≈0.2 needs more than 80 pairs for δ=0.05
    assert pd.isna(table.loc[0, "queries_needed"])
    assert "dataset" in table.columns and table.loc[1, "dataset"] == "b"


def test_p_values_are_the_randomization_test_holm_corrected_over_the_claims():
    data = _per_query(0.01)
    claims = [Claim("x", "p", "small", "large", "m", where={"dataset": d}) for d in ("a", "b")]
    table = verdict_table(data, claims, n_resamples=2000)
    raw = []
    for claim in claims:
        a, b = paired_scores(data, claim)
        raw.append(randomization_test(a, b, 2000, 0))
    assert table["p"].tolist() == pytest.approx(raw)
    assert table["p_holm"].tolist() == pytest.approx(holm(raw))


def test_pairs_only_queries_both_arms_answered():
    data = _per_query(0.05, n=10)
    data = data[~((data["qid"] == "q0") & (data["system"] == "large"))]
    a, b = paired_scores(data, Claim("x", "p", "small", "large", "m", where={"dataset": "a"}))
    assert a.size == b.size == 9


def test_missing_arm_or_column_is_a_clear_error():
    data = _per_query(0.05, n=5)
    with pytest.raises(ConfigError, match="no per-query scores for 'tiny'"):
        verdict_table(data, [Claim("x", "p", "tiny", "large", "m")])
    with pytest.raises(ConfigError, match="lacks"):
        verdict_table(data, [Claim("x", "p", "small", "large", "m", where={"model": "z"})])


def test_report_saves_renders_and_reloads_its_verdicts(tmp_path):
    data = _per_query(0.05)
    table = verdict_table(data, [Claim("small wins", "paper says so", "small", "large", "m",
                                       where={"dataset": "a"})], n_resamples=500)
    report = Report("T", pd.DataFrame([{"claim": "c", "paper": 1, "ours": 2}]), verdicts=table)
    report.save(tmp_path)
    text = (tmp_path / "paper_vs_ours.md").read_text()
    assert "reproduced" in text and "| small wins (a) |" in text  # the claim's filter named beside it
    assert "Paper: paper says so" in text  # one paper string for every claim: said once
    again = Report.load(tmp_path)
    assert again.verdicts["verdict"].tolist() == ["reproduced"]
    Report("T", report.rows).save(tmp_path)
    assert not (tmp_path / "verdicts.csv").exists()
    assert verdict_counts(table) == {"reproduced": 1}


def test_an_inconclusive_test_can_still_rule_the_papers_effect_out():
    data = _per_query(0.0, n=60)
    data.loc[(data["dataset"] == "a") & (data["system"] == "small"), "value"] += np.tile([0.01, -0.01], 30)
    table = verdict_table(data, [Claim("x", "p", "small", "large", "m", +1, paper_effect=0.3, where={"dataset": "a"}),
                                 Claim("y", "p", "small", "large", "m", +1, paper_effect=0.0001,
                                       where={"dataset": "b"})], n_resamples=500)
    assert list(table["verdict"]) == ["inconclusive", "inconclusive"]
    assert table.loc[0, "paper_effect_excluded"]
    assert not table.loc[1, "paper_effect_excluded"]


def test_too_few_or_all_tied_pairs_rule_nothing_out():
    tied = verdict_table(_per_query(0.0, n=60), [Claim("x", "p", "small", "large", "m", paper_effect=0.3,
                                                       where={"dataset": "a"})], n_resamples=200)
    few = verdict_table(_per_query(0.0, n=10), [Claim("x", "p", "small", "large", "m", paper_effect=0.3,
                                                      where={"dataset": "b"})], n_resamples=200)
    assert tied.loc[0, "paper_effect_excluded"] is None and few.loc[0, "paper_effect_excluded"] is None


def test_a_single_pair_is_untestable_not_an_error():
    table = verdict_table(_per_query(0.3, n=1), [Claim("x", "p", "small", "large", "m", where={"dataset": "a"})])
    assert table.loc[0, "verdict"] == "untestable (clusters)" and table.loc[0, "p"] == 1.0 and table.loc[0, "n"] == 1


def test_queries_needed_are_sized_for_the_corrected_level():
    from grainlab.evaluation.verdicts import queries_needed

    data = _per_query(0.0, n=60)
    claims = [Claim("x", "p", "small", "large", "m", paper_effect=0.05, where={"dataset": "b"}),
              Claim("y", "p", "small", "large", "m", paper_effect=0.05, where={"dataset": "a"})]
    table = verdict_table(data, claims, n_resamples=200)
    a, b = paired_scores(data, claims[0])
    assert table.loc[0, "queries_needed"] == queries_needed(float(np.std(a - b, ddof=1)), 0.05, 0.025)
    assert table.loc[0, "queries_needed"] > queries_needed(float(np.std(a - b, ddof=1)), 0.05)


def test_sample_labels_join_on_the_dataset_and_survive_a_run_with_no_testable_claim():
    """A smoke run whose sizes test no claim gives a verdict table without a ``dataset`` column; the
    sample labels must still attach (regression: notebook 01 failed with KeyError 'dataset')."""
    labelled = with_samples(pd.DataFrame({"dataset": ["a", "b"], "verdict": ["reproduced", "inconclusive"]}),
                            {"a": "3 of 10 documents", "b": "all documents"})
    assert labelled["sample"].tolist() == ["3 of 10 documents", "all documents"]
    empty = with_samples(verdict_table(pd.DataFrame(columns=["query_id", "system", "value"]), []), {"a": "x"})
    assert len(empty) == 0 and "sample" in empty.columns


def test_a_family_holds_each_contrast_once_by_system_spec_not_label():
    """Issue 36 item 5: "late · fixed 256 tokens" and "late · 256" were one system counted twice."""
    rows = [{"qid": f"q{i}", "system": label, "chunker": chunker, "retriever": retriever, "measure": "m",
             "value": float(i % 3 == 0) * (retriever == "late"), "part": part}
            for i in range(30)
            for part, names in (("main", ("late · fixed 256 tokens", "naive · fixed 256 tokens")),
                                ("sweep", ("late · 256", "naive · 256")))
            for label, retriever in zip(names, ("late", "naive")) for chunker in ["fixed(size=256)"]]
    data = pd.DataFrame(rows)
    claims = [Claim("main", "p", "late · fixed 256 tokens", "naive · fixed 256 tokens", "m", where={"part": "main"}),
              Claim("sweep", "p", "late · 256", "naive · 256", "m", where={"part": "sweep"})]
    with pytest.warns(DuplicateContrastWarning, match="same contrast"):
        table = verdict_table(data, claims, n_resamples=200)
    assert table["claim"].tolist() == ["main"]
    assert table.loc[0, "p_holm"] == pytest.approx(table.loc[0, "p"])  # a family of one, not two


def test_arms_both_at_the_floor_are_untestable_and_leave_the_holm_family():
    """Issue 36 item 2: EM 0 in both arms is "untestable (floor)", not "inconclusive", and does not
    inflate the Holm correction of the testable claims."""
    data = _per_query(0.05)
    zero = data[data["dataset"] == "a"].assign(dataset="z", value=0.0)
    data = pd.concat([data, zero], ignore_index=True)
    claims = [Claim("small wins on a", "p", "small", "large", "m", +1, where={"dataset": "a"}),
              Claim("floor", "p", "small", "large", "m", +1, where={"dataset": "z"})]
    table = verdict_table(data, claims, n_resamples=2000)
    assert table["verdict"].tolist() == ["reproduced", "untestable (floor)"]
    alone = verdict_table(data, claims[:1], n_resamples=2000)
    assert table.loc[0, "p_holm"] == pytest.approx(alone.loc[0, "p_holm"])


def test_clustered_questions_widen_the_interval_and_weaken_the_test():
    """Issue 36 item 6: 10 documents × 8 questions whose differences move together per document
    have a design effect near 8; the cluster-aware test is weaker than the independent one."""
    rng = np.random.default_rng(3)
    shift = np.repeat(rng.normal(0.04, 0.2, 10), 8)  # one shared shift per document
    rows = []
    for i, d in enumerate(shift):
        rows += [{"qid": f"q{i}", "doc": f"d{i // 8}", "system": "a", "measure": "m", "value": 0.5 + d},
                 {"qid": f"q{i}", "doc": f"d{i // 8}", "system": "b", "measure": "m", "value": 0.5}]
    data = pd.DataFrame(rows)
    claim = [Claim("a beats b", "p", "a", "b", "m")]
    flat = verdict_table(data, claim, n_resamples=2000).iloc[0]
    clustered = verdict_table(data, claim, n_resamples=2000, cluster_col="doc").iloc[0]
    assert flat["cluster"] == "question" and flat["clusters"] == 80 and flat["design_effect"] == 1.0
    assert clustered["cluster"] == "doc" and clustered["clusters"] == 10
    # identical within clusters: C/(C−1) · m · (N−1)/N
    assert clustered["design_effect"] == pytest.approx(10 / 9 * 8 * 79 / 80, rel=1e-9)
    assert clustered["ci_high"] - clustered["ci_low"] > 2 * (flat["ci_high"] - flat["ci_low"])
    assert clustered["p"] > flat["p"]


def test_cluster_labels_join_per_dataset_and_a_missing_one_is_named():
    from grainlab.studies.claims import with_clusters
    per_query = pd.DataFrame({"dataset": ["a", "a", "b"], "qid": ["1", "2", "1"], "value": [0.0, 1.0, 1.0]})
    labelled = with_clusters(per_query, {"a": {"1": "d1", "2": "d1"}, "b": {"1": "d9"}}, "document")
    assert labelled["document"].tolist() == ["d1", "d1", "d9"]
    with pytest.raises(ConfigError, match="dataset 'b' query '1'"):
        with_clusters(per_query, {"a": {"1": "d1", "2": "d1"}}, "document")


def test_reader_claims_that_differ_by_setting_are_not_taken_for_duplicates():
    """Reader tables (no retriever/chunker columns) name arms by model and position; the same
    positions in two settings are two contrasts, never one."""
    rng = np.random.default_rng(1)
    rows = [{"qid": f"q{i}", "model": "m", "setting": setting, "position": position, "correct": float(rng.random() < p)}
            for setting in ("10 documents", "20 documents") for i in range(40)
            for position, p in (("first", 0.7), ("middle", 0.4))]
    data = pd.DataFrame(rows)
    claims = [Claim(f"first beats middle · {s}", "p", "first", "middle", None, where={"model": "m", "setting": s})
              for s in ("10 documents", "20 documents")]
    table = verdict_table(data, claims, system_col="position", value_col="correct", n_resamples=200)
    assert len(table) == 2


def test_a_reader_run_cut_by_its_token_limit_gives_no_verdict():
    rng = np.random.default_rng(0)
    rows = []
    for q in range(60):
        for position, correct in (("first", 1.0), ("middle", float(rng.random() < 0.3)), ("last", 1.0)):
            cut = position == "last" and q < 3  # 3 of 60 = 5% of the last arm used its whole budget
            rows.append({"qid": f"q{q}", "position": position, "correct": correct,
                         "new_tokens": 64 if cut else 20, "max_new_tokens": 64})
    runs = pd.DataFrame(rows)
    claims = [Claim("primacy", "p", "first", "middle"), Claim("recency", "p", "last", "middle")]
    table = verdict_table(runs, claims, system_col="position", value_col="correct", n_resamples=2000)
    assert table["verdict"].tolist() == ["reproduced", "untestable (truncated)"]
    assert table["share_at_limit"].tolist() == [0.0, 0.05]
    alone = verdict_table(runs, claims[:1], system_col="position", value_col="correct", n_resamples=2000)
    assert table["p_holm"].iloc[0] == alone["p_holm"].iloc[0]  # the untestable claim left the Holm family
    one_cut = runs.assign(new_tokens=np.where((runs["position"] == "last") & (runs["qid"] == "q0"), 64, 20))
    kept = verdict_table(one_cut, claims, system_col="position", value_col="correct", n_resamples=2000)
    assert kept["verdict"].tolist() == ["reproduced", "reproduced"]  # 1 of 60 (1.7%) is under the 2% flag
    assert "share_at_limit" not in verdict_table(runs.drop(columns="max_new_tokens"), claims[:1],
                                                 system_col="position", value_col="correct").columns


@pytest.mark.parametrize("cut_arm", ["first", "middle"])
def test_a_token_limit_in_either_arm_makes_the_claim_untestable(cut_arm):
    """The share at the limit is the larger of both arms': a cut baseline counts as much as a cut system."""
    rows = [{"qid": f"q{q}", "position": position, "correct": float(position == "first" or q % 3 == 0),
             "new_tokens": 64 if position == cut_arm and q < 6 else 20, "max_new_tokens": 64}
            for q in range(60) for position in ("first", "middle")]
    table = verdict_table(pd.DataFrame(rows), [Claim("primacy", "p", "first", "middle")], system_col="position",
                          value_col="correct", n_resamples=500)
    assert table["verdict"].tolist() == ["untestable (truncated)"]
    assert table["share_at_limit"].tolist() == [0.1]


def _clustered(n_clusters: int, per_cluster: int, effect: float, claims: int) -> pd.DataFrame:
    rows = []
    for c in range(claims):
        for k in range(n_clusters):
            for j in range(per_cluster):
                qid = f"q{k}-{j}"
                rows += [{"qid": qid, "system": "small", "value": 0.5 + effect, "doc": f"d{k}", "dataset": f"s{c}"},
                         {"qid": qid, "system": "large", "value": 0.5, "doc": f"d{k}", "dataset": f"s{c}"}]
    return pd.DataFrame(rows)


def test_eight_clusters_cannot_carry_eighteen_claims_and_say_how_many_would():
    """8 stitched documents: the smallest sign-flip p is 2/256; over 18 claims Holm makes it 0.14,
    so even an effect in every cluster is untestable, never 'inconclusive'; 10 clusters would do
    (18 · 2 / 2^10 = 0.035 < 0.05). Two claims on the same 8 clusters are testable."""
    claims = [Claim(f"c{i}", "p", "small", "large", None, where={"dataset": f"s{i}"}) for i in range(18)]
    table = verdict_table(_clustered(8, 3, 0.2, 18), claims, value_col="value", cluster_col="doc", n_resamples=500)
    assert set(table["verdict"]) == {"untestable (clusters)"}
    assert set(table["clusters_needed"]) == {10} and table["queries_needed"].isna().all()
    two = verdict_table(_clustered(8, 3, 0.2, 2), claims[:2], value_col="value", cluster_col="doc", n_resamples=500)
    assert set(two["verdict"]) == {"reproduced"}


def test_queries_needed_are_not_sized_on_an_effect_against_the_claim():
    data = _per_query(-0.02, n=40)
    noisy = data.assign(value=data["value"] + np.random.default_rng(0).normal(0, 0.3, len(data)))
    table = verdict_table(noisy, [Claim("x", "p", "small", "large", "m", +1, where={"dataset": "a"})], n_resamples=300)
    row = table.iloc[0]
    assert row["verdict"] == "inconclusive" and row["effect"] < 0
    assert row["effect_for_power"] == "none" and pd.isna(row["queries_needed"])
    with_paper = verdict_table(noisy, [Claim("x", "p", "small", "large", "m", +1, paper_effect=0.05,
                                             where={"dataset": "a"})], n_resamples=300).iloc[0]
    assert with_paper["effect_for_power"] == "paper"
