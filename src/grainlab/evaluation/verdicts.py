"""Verdicts on a paper's claim, computed from a paired test — never written by hand.

A claim predicts the direction of a paired difference (ours − baseline, per query). With the
test's Holm-corrected p-value and the 95% interval of the mean difference:

- **reproduced** — significant, in the claimed direction;
- **not reproduced** — significant, in the opposite direction;
- **inconclusive** — not significant; then how many queries a paired test would need to detect
  the paper's effect (or, without a paper effect, the one we observed) at α = 0.05 with 80%
  power, from the spread of our per-query differences (normal approximation), times the design
  effect when questions cluster;
- **untestable (floor)** / **untestable (ceiling)** — both arms score 0 (or 1) on every query: the
  measurement cannot tell the arms apart, so no test is run (a harness or metric problem to fix,
  not evidence either way);
- **untestable (truncated)** — an arm is a reader run where more than 2% of the generations stopped
  at the token limit: it measures the budget, not the reader, so no test is run either;
- **untestable (clusters)** — even the most extreme outcome of the sign-flip test cannot reach α
  after Holm's correction: with C clusters (or n independent pairs) its smallest p is 2 / 2^C, and
  m claims in the family make the smallest Holm p m · 2 / 2^C (8 stitched documents and 18 claims:
  0.14). Such a claim says nothing either way; ``clusters_needed`` says how many would do.

"Queries needed" are sized on the paper's effect, else on the observed one only when it points the
claimed way: an observed effect against the claim sizes nothing (``effect_for_power`` says
``none``).

When questions share a unit (a gold document, an article, a stitched document), ``clusters``
labels each pair and the interval, the p-value and the design effect are cluster-aware
(:func:`~grainlab.evaluation.significance.cluster_bootstrap_ci`,
:func:`~grainlab.evaluation.significance.cluster_randomization_test`).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from grainlab.errors import ConfigError
from grainlab.evaluation.significance import bootstrap_ci, cluster_bootstrap_ci, design_effect

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"
UNTESTABLE_FLOOR, UNTESTABLE_CEILING = "untestable (floor)", "untestable (ceiling)"
UNTESTABLE_TRUNCATED = "untestable (truncated)"
UNTESTABLE_CLUSTERS = "untestable (clusters)"
UNTESTABLE = (UNTESTABLE_FLOOR, UNTESTABLE_CEILING, UNTESTABLE_TRUNCATED, UNTESTABLE_CLUSTERS)


def smallest_p(units: int, n_resamples: int = 10_000) -> float:
    """The smallest two-sided p a paired sign-flip test can give over ``units`` independent units
    (pairs, or clusters): 2 / 2^units when every flip is enumerated, 2 / (resamples + 1) otherwise."""
    if units < 2:
        return 1.0
    flips = n_resamples + 1 if units > math.log2(n_resamples + 1) else 2.0 ** units  # 2^units overflows a float
    return min(1.0, 2.0 / flips)


def clusters_needed(family_size: int, alpha: float = 0.05) -> int:
    """The fewest units whose most extreme sign-flip outcome passes Holm at ``alpha`` over
    ``family_size`` claims: the smallest C with family_size · 2 / 2^C < alpha."""
    return max(2, math.floor(math.log2(2 * max(family_size, 1) / alpha)) + 1)


def untestable_by_units(units: list[int], n_resamples: int = 10_000, alpha: float = 0.05) -> list[bool]:
    """Which claims of one Holm family cannot reach ``alpha`` whatever the data, given each claim's
    number of independent units: the family shrinks as such claims leave it, until none is left
    to remove."""
    out = [False] * len(units)
    while True:
        family = sum(1 for flag in out if not flag)
        changed = False
        for i, n in enumerate(units):
            if not out[i] and family * smallest_p(n, n_resamples) >= alpha:
                out[i], changed = True, True
        if not changed:
            return out


def at_bound(a: np.ndarray, b: np.ndarray, floor: float = 0.0, ceiling: float = 1.0) -> str | None:
    """:data:`UNTESTABLE_FLOOR` when both arms score ``floor`` on every query,
    :data:`UNTESTABLE_CEILING` when both score ``ceiling``, else ``None``."""
    values = np.concatenate([np.asarray(a, dtype=float), np.asarray(b, dtype=float)])
    if values.size and np.all(values == floor):
        return UNTESTABLE_FLOOR
    if values.size and np.all(values == ceiling):
        return UNTESTABLE_CEILING
    return None


def queries_needed(sd_difference: float, effect: float, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Pairs a two-sided paired test needs to detect a mean difference ``effect`` when per-query
    differences spread with standard deviation ``sd_difference``: ((z₁₋α/₂ + z_power)·σ/δ)²."""
    if not effect or not math.isfinite(effect) or sd_difference <= 0:
        return None
    z = stats.norm.ppf(1 - alpha / 2) + stats.norm.ppf(power)
    return math.ceil((z * sd_difference / abs(effect)) ** 2)


def verdict(delta: float, p_holm: float, direction: int, alpha: float = 0.05) -> str:
    """``reproduced`` / ``not reproduced`` / ``inconclusive`` for a claimed ``direction`` (+1: ours
    should be higher than the baseline, −1: lower)."""
    if direction not in (1, -1):
        raise ConfigError(f"a claim's direction is +1 or -1, got {direction!r}")
    if not p_holm < alpha or delta == 0:
        return INCONCLUSIVE
    return REPRODUCED if np.sign(delta) == direction else NOT_REPRODUCED


def verdict_row(differences: np.ndarray, p_holm: float, direction: int, paper_effect: float | None = None,
                alpha: float = 0.05, power: float = 0.8, n_resamples: int = 10_000, seed: int = 0,
                family_size: int = 1, clusters: np.ndarray | None = None) -> dict:
    """The verdict columns of one paper-vs-ours row from the per-query differences and the
    Holm-corrected p of their paired test: effect, 95% CI, n, p, verdict, and — when
    inconclusive — the queries needed to detect the paper's effect (else the observed one) at
    α / ``family_size``, the strictest step of a Holm correction over that many claims.
    With ``clusters`` (one label per difference) the interval is a cluster bootstrap, ``clusters``
    counts them and the queries needed are scaled by the ``design_effect``."""
    differences = np.asarray(differences, dtype=float)
    if differences.size == 0:
        raise ConfigError("a verdict needs at least one paired difference")
    effect = float(differences.mean())
    if clusters is None:
        low, high = bootstrap_ci(differences, n_resamples=n_resamples, seed=seed)
        n_clusters, effect_of_design = int(differences.size), 1.0
    else:
        clusters = np.asarray(clusters)
        if clusters.shape != differences.shape:
            raise ConfigError(f"one cluster label per difference: {clusters.shape} labels, {differences.shape} pairs")
        low, high = cluster_bootstrap_ci(differences, clusters, n_resamples=n_resamples, seed=seed)
        n_clusters, effect_of_design = int(np.unique(clusters).size), design_effect(differences, clusters)
    label = verdict(effect, p_holm, direction, alpha)
    needed, basis, units_needed = None, "paper" if paper_effect else "observed", None
    if label == INCONCLUSIVE:
        target = paper_effect if paper_effect else effect
        if not paper_effect and np.sign(effect) != direction:
            target, basis = 0.0, "none"  # an effect against the claim says nothing of the size to look for
        independent = queries_needed(float(differences.std(ddof=1)) if differences.size > 1 else 0.0, target,
                                     alpha / family_size, power)
        needed = None if independent is None else math.ceil(independent * max(effect_of_design, 1.0))
        if clusters is not None and needed is not None:  # clusters limit the test: how many of them
            per_cluster = differences.size / n_clusters
            units_needed = max(math.ceil(needed / per_cluster), clusters_needed(family_size, alpha))
    return {"effect": effect, "ci_low": low, "ci_high": high, "n": int(differences.size), "p_holm": float(p_holm),
            "verdict": label, "queries_needed": needed, "clusters_needed": units_needed,
            "effect_for_power": basis, "clusters": n_clusters, "design_effect": effect_of_design}
