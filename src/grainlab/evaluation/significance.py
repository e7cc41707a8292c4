"""Paired significance against a baseline: t-test, randomization test, Holm correction."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (monotone, capped at 1)."""
    m = len(p_values)
    order = np.argsort(p_values)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (m - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted.tolist()


def randomization_test(a: np.ndarray, b: np.ndarray, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided paired randomization (sign-flip) test of mean(a − b) = 0."""
    if np.allclose(a, b):
        return 1.0
    result = stats.permutation_test((a, b), lambda x, y, axis: np.mean(x - y, axis=axis),
                                    permutation_type="samples", n_resamples=n_resamples,
                                    alternative="two-sided", random_state=seed, vectorized=True)
    return float(result.pvalue)


def _pair_row(system: str, baseline: str, measure: str, a: np.ndarray, b: np.ndarray,
              n_resamples: int, seed: int, system_col: str = "system") -> dict:
    """Means, delta, wins/ties/losses and raw p-values of paired per-query scores ``a`` vs ``b``."""
    diff = a - b
    return {system_col: system, "baseline": baseline, "measure": measure, "mean": a.mean(),
            "baseline_mean": b.mean(), "delta": diff.mean(), "wins": int((diff > 0).sum()),
            "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum()),
            "p_ttest": 1.0 if np.allclose(diff, 0) else float(stats.ttest_rel(a, b).pvalue),
            "p_randomization": randomization_test(a, b, n_resamples, seed)}


def _with_holm(rows: list[dict]) -> pd.DataFrame:
    result = pd.DataFrame(rows)
    if not result.empty:
        result["p_ttest_holm"] = holm(result["p_ttest"].tolist())
        result["p_randomization_holm"] = holm(result["p_randomization"].tolist())
    return result


def _by_system(per_query: pd.DataFrame, measure: str, system_col: str = "system") -> pd.DataFrame:
    return per_query[per_query["measure"] == measure].pivot_table(
        index="qid", columns=system_col, values="value", aggfunc="first")


def compare_to_baseline(per_query: pd.DataFrame, baseline: str, measure: str, system_col: str = "system",
                        n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """One row per other system: means, delta, wins/ties/losses, p-values (raw and Holm)."""
    table = _by_system(per_query, measure, system_col)
    base = table[baseline].to_numpy()
    return _with_holm([_pair_row(system, baseline, measure, table[system].to_numpy(), base, n_resamples, seed,
                                 system_col) for system in table.columns if system != baseline])


def bootstrap_ci(differences: np.ndarray, confidence: float = 0.95, n_resamples: int = 10_000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap confidence interval of the mean of paired per-query differences."""
    differences = np.asarray(differences, dtype=np.float64)
    if np.allclose(differences, differences[0]):
        return float(differences[0]), float(differences[0])
    result = stats.bootstrap((differences,), np.mean, confidence_level=confidence, n_resamples=n_resamples,
                             method="percentile", random_state=seed, vectorized=True)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def paired_comparison(per_query: pd.DataFrame, pairs: list[tuple[str, str]], measure: str,
                      n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """``(system, baseline)`` pairs: delta, bootstrap CI, wins/ties/losses, p-values (Holm over pairs)."""
    table = _by_system(per_query, measure)
    rows = []
    for system, baseline in pairs:
        a, b = table[system].to_numpy(), table[baseline].to_numpy()
        low, high = bootstrap_ci(a - b, n_resamples=n_resamples, seed=seed)
        rows.append({**_pair_row(system, baseline, measure, a, b, n_resamples, seed), "ci_low": low, "ci_high": high})
    return _with_holm(rows)


def _cluster_sums(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster sums of ``values`` and cluster sizes, clusters in sorted order."""
    codes, index = np.unique(np.asarray(clusters), return_inverse=True)
    sums = np.bincount(index, weights=np.asarray(values, dtype=np.float64), minlength=codes.size)
    return sums, np.bincount(index, minlength=codes.size).astype(np.float64)


def cluster_randomization_test(a: np.ndarray, b: np.ndarray, clusters: np.ndarray, n_resamples: int = 10_000,
                               seed: int = 0) -> float:
    """Two-sided paired randomization test of mean(a − b) = 0 for questions that share a unit
    (``clusters``: one label per pair, e.g. the gold document): the sign flips per cluster of
    summed differences, so questions of one cluster move together. With one question per cluster
    this is :func:`randomization_test`. One cluster cannot be tested: p = 1."""
    sum_a, _ = _cluster_sums(a, clusters)
    sum_b, _ = _cluster_sums(b, clusters)
    if sum_a.size < 2:  # a single cluster: its one sign flip is the observed difference or its mirror
        return 1.0
    # swapping a cluster's arms flips the sign of its summed difference; the mean over clusters is
    # the overall mean × N / C, a constant factor that leaves the p-value unchanged
    return randomization_test(sum_a, sum_b, n_resamples, seed)


def cluster_bootstrap_ci(differences: np.ndarray, clusters: np.ndarray, confidence: float = 0.95,
                         n_resamples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """Percentile cluster bootstrap interval of the mean paired difference: whole clusters are
    resampled with replacement and the mean is the ratio of resampled sums to resampled sizes."""
    differences = np.asarray(differences, dtype=np.float64)
    sums, sizes = _cluster_sums(differences, clusters)
    if np.allclose(differences, differences[0]) or sums.size < 2:
        mean = float(differences.mean())
        return mean, mean
    result = stats.bootstrap((sums, sizes), lambda s, n, axis=-1: s.sum(axis=axis) / n.sum(axis=axis),
                             paired=True, confidence_level=confidence, n_resamples=n_resamples,
                             method="percentile", random_state=seed, vectorized=True)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def design_effect(differences: np.ndarray, clusters: np.ndarray) -> float:
    """Variance of the mean under clustering ÷ its variance if the questions were independent:
    the cluster-robust (CR1-style, C/(C−1)) variance of the mean over s²/N. 1 for independent
    questions, up to the cluster size when a cluster's questions move together (Miller 2024)."""
    differences = np.asarray(differences, dtype=np.float64)
    n = differences.size
    sums, sizes = _cluster_sums(differences, clusters)
    c = sums.size
    naive = differences.var(ddof=1) / n if n > 1 else 0.0
    if c < 2 or naive == 0:
        return 1.0
    clustered = c / (c - 1) * np.sum((sums - sizes * differences.mean()) ** 2) / n ** 2
    return float(clustered / naive)
