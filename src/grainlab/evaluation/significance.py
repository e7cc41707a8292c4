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
