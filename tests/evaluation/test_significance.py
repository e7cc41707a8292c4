import numpy as np
import pandas as pd
import pytest
from scipy import stats

from grainlab.evaluation import compare_to_baseline, holm, randomization_test


def test_holm_against_hand_values():
    # sorted p: 0.01*3=0.03, 0.02*2=0.04, 0.04*1=0.04 (monotone)
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_randomization_test():
    rng = np.random.default_rng(0)
    a = rng.normal(size=200)
    assert randomization_test(a, a) == 1.0
    assert randomization_test(a + 1.0, a, n_resamples=2000) < 0.01
    b = a + rng.normal(scale=0.01, size=200) * 0
    assert randomization_test(a, b) == 1.0


def test_compare_to_baseline_table():
    qids = [f"q{i}" for i in range(6)]
    base = [0.0, 0.5, 1.0, 0.2, 0.3, 0.4]
    better = [1.0, 0.5, 1.0, 0.9, 0.8, 0.9]
    rows = [(q, "base", "m", v) for q, v in zip(qids, base)] + [(q, "new", "m", v) for q, v in zip(qids, better)]
    table = compare_to_baseline(pd.DataFrame(rows, columns=["qid", "system", "measure", "value"]),
                                "base", "m", n_resamples=5000)
    row = table.iloc[0]
    assert (row.wins, row.ties, row.losses) == (4, 2, 0)
    assert row.delta == pytest.approx(np.mean(better) - np.mean(base))
    assert row.p_ttest == pytest.approx(stats.ttest_rel(better, base).pvalue)
    assert 0 < row.p_randomization < 0.2


def test_bootstrap_ci_covers_the_mean_and_shrinks_with_n():
    from grainlab.evaluation import bootstrap_ci

    rng = np.random.default_rng(0)
    small = rng.normal(0.1, 1.0, size=50)
    large = rng.normal(0.1, 1.0, size=2000)
    lo_s, hi_s = bootstrap_ci(small, n_resamples=2000)
    lo_l, hi_l = bootstrap_ci(large, n_resamples=2000)
    assert lo_s < small.mean() < hi_s and lo_l < large.mean() < hi_l
    assert (hi_l - lo_l) < (hi_s - lo_s)
    assert bootstrap_ci(np.zeros(10)) == (0.0, 0.0)


def test_paired_comparison_rows():
    from grainlab.evaluation import paired_comparison

    rows = [(f"q{i}", s, "m", v) for i in range(8) for s, v in (("late", 0.5 + 0.05 * i), ("naive", 0.5))]
    table = paired_comparison(pd.DataFrame(rows, columns=["qid", "system", "measure", "value"]),
                              [("late", "naive")], "m", n_resamples=500)
    row = table.iloc[0]
    assert (row.wins, row.ties, row.losses) == (7, 1, 0)
    assert row.ci_low > 0 and row.delta == pytest.approx(0.175)


def test_cluster_tests_reduce_to_the_plain_ones_with_one_question_per_cluster():
    from grainlab.evaluation.significance import (
        bootstrap_ci,
        cluster_bootstrap_ci,
        cluster_randomization_test,
        design_effect,
        randomization_test,
    )
    rng = np.random.default_rng(0)
    a, b = rng.normal(0.1, 1, 40), rng.normal(0, 1, 40)
    singletons = np.arange(40)
    assert cluster_randomization_test(a, b, singletons, 2000) == pytest.approx(randomization_test(a, b, 2000))
    assert design_effect(a - b, singletons) == pytest.approx(1.0)  # C/(C−1) and s²'s N−1 cancel
    low, high = cluster_bootstrap_ci(a - b, singletons, n_resamples=2000)
    plain = bootstrap_ci(a - b, n_resamples=2000)
    assert low == pytest.approx(plain[0], abs=0.05) and high == pytest.approx(plain[1], abs=0.05)


def test_cluster_sign_flip_p_equals_exact_enumeration():
    """Five clusters: every one of the 2⁵ sign patterns of the cluster sums, counted by hand."""
    from itertools import product

    from grainlab.evaluation.significance import cluster_randomization_test
    diff = np.array([0.3, 0.1, 0.2, 0.5, -0.1, 0.4, 0.2, 0.0])
    clusters = np.array(["a", "a", "b", "c", "c", "d", "e", "e"])
    sums = np.array([0.4, 0.2, 0.4, 0.4, 0.2])
    observed = abs(sums.sum())
    extreme = sum(abs(np.dot(signs, sums)) >= observed - 1e-12 for signs in product((1, -1), repeat=5))
    p = cluster_randomization_test(diff, np.zeros_like(diff), clusters, n_resamples=10_000)
    assert p == pytest.approx(extreme / 32)


def test_a_single_cluster_cannot_be_tested():
    from grainlab.evaluation.significance import cluster_bootstrap_ci, cluster_randomization_test

    a, b = np.array([1.0, 1.0, 0.0, 1.0]), np.array([0.0, 0.0, 0.0, 1.0])
    one = np.array(["doc"] * 4)
    assert cluster_randomization_test(a, b, one, 1000) == 1.0
    assert cluster_bootstrap_ci(a - b, one, n_resamples=1000) == (0.5, 0.5)


def test_the_cluster_bootstrap_weights_clusters_by_their_size():
    """With unequal clusters the interval is around the mean over questions (Σ sums / Σ sizes),
    not the mean of cluster means; a hand-written resampling loop is the reference."""
    from grainlab.evaluation.significance import cluster_bootstrap_ci

    differences = np.array([1.0] * 10 + [0.0] * 5 + [0.5, 0.5])
    clusters = np.array(["big"] * 10 + ["a", "b", "c", "d", "e"] + ["f", "f"])
    low, high = cluster_bootstrap_ci(differences, clusters, n_resamples=4000, seed=1)
    rng = np.random.default_rng(7)
    labels = np.unique(clusters)
    sums = np.array([differences[clusters == c].sum() for c in labels])
    sizes = np.array([(clusters == c).sum() for c in labels])
    draws = rng.integers(0, labels.size, size=(4000, labels.size))
    means = sums[draws].sum(axis=1) / sizes[draws].sum(axis=1)
    ref_low, ref_high = np.percentile(means, [2.5, 97.5])
    assert low == pytest.approx(ref_low, abs=0.04) and high == pytest.approx(ref_high, abs=0.04)
    assert low < differences.mean() < high  # 11/17 = 0.647; the mean of cluster means is 0.25
