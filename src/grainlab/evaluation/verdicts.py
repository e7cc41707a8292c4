"""Verdicts on a paper's claim, computed from a paired test — never written by hand.

A claim predicts the direction of a paired difference (ours − baseline, per query). With the
test's Holm-corrected p-value and the 95% interval of the mean difference:

- **reproduced** — significant, in the claimed direction;
- **not reproduced** — significant, in the opposite direction;
- **inconclusive** — not significant; then how many queries a paired test would need to detect
  the paper's effect (or, without a paper effect, the one we observed) at α = 0.05 with 80%
  power, from the spread of our per-query differences (normal approximation).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from grainlab.errors import ConfigError
from grainlab.evaluation.significance import bootstrap_ci

REPRODUCED, NOT_REPRODUCED, INCONCLUSIVE = "reproduced", "not reproduced", "inconclusive"


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
                family_size: int = 1) -> dict:
    """The verdict columns of one paper-vs-ours row from the per-query differences and the
    Holm-corrected p of their paired test: effect, 95% CI, n, p, verdict, and — when
    inconclusive — the queries needed to detect the paper's effect (else the observed one) at
    α / ``family_size``, the strictest step of a Holm correction over that many claims."""
    differences = np.asarray(differences, dtype=float)
    if differences.size == 0:
        raise ConfigError("a verdict needs at least one paired difference")
    effect = float(differences.mean())
    low, high = bootstrap_ci(differences, n_resamples=n_resamples, seed=seed)
    label = verdict(effect, p_holm, direction, alpha)
    needed = None
    if label == INCONCLUSIVE:
        target = paper_effect if paper_effect else effect
        needed = queries_needed(float(differences.std(ddof=1)) if differences.size > 1 else 0.0, target,
                                alpha / family_size, power)
    return {"effect": effect, "ci_low": low, "ci_high": high, "n": int(differences.size), "p_holm": float(p_holm),
            "verdict": label, "queries_needed": needed,
            "effect_for_power": "paper" if paper_effect else "observed"}
