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


def compare_to_baseline(per_query: pd.DataFrame, baseline: str, measure: str, system_col: str = "system",
                        n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """One row per other system: means, delta, wins/ties/losses, p-values (raw and Holm)."""
    table = per_query[per_query["measure"] == measure].pivot_table(
        index="qid", columns=system_col, values="value", aggfunc="first")
    base = table[baseline].to_numpy()
    rows = []
    for system in table.columns:
        if system == baseline:
            continue
        other = table[system].to_numpy()
        diff = other - base
        t_p = 1.0 if np.allclose(diff, 0) else float(stats.ttest_rel(other, base).pvalue)
        rows.append({system_col: system, "baseline": baseline, "measure": measure,
                     "mean": other.mean(), "baseline_mean": base.mean(), "delta": diff.mean(),
                     "wins": int((diff > 0).sum()), "ties": int((diff == 0).sum()),
                     "losses": int((diff < 0).sum()), "p_ttest": t_p,
                     "p_randomization": randomization_test(other, base, n_resamples, seed)})
    result = pd.DataFrame(rows)
    if not result.empty:
        result["p_ttest_holm"] = holm(result["p_ttest"].tolist())
        result["p_randomization_holm"] = holm(result["p_randomization"].tolist())
    return result


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
    table = per_query[per_query["measure"] == measure].pivot_table(
        index="qid", columns="system", values="value", aggfunc="first")
    rows = []
    for system, baseline in pairs:
        a, b = table[system].to_numpy(), table[baseline].to_numpy()
        diff = a - b
        low, high = bootstrap_ci(diff, n_resamples=n_resamples, seed=seed)
        rows.append({"system": system, "baseline": baseline, "measure": measure, "mean": a.mean(),
                     "baseline_mean": b.mean(), "delta": diff.mean(), "ci_low": low, "ci_high": high,
                     "wins": int((diff > 0).sum()), "ties": int((diff == 0).sum()), "losses": int((diff < 0).sum()),
                     "p_ttest": 1.0 if np.allclose(diff, 0) else float(stats.ttest_rel(a, b).pvalue),
                     "p_randomization": randomization_test(a, b, n_resamples, seed)})
    result = pd.DataFrame(rows)
    if not result.empty:
        result["p_ttest_holm"] = holm(result["p_ttest"].tolist())
        result["p_randomization_holm"] = holm(result["p_randomization"].tolist())
    return result
