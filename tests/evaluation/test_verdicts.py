"""Verdicts from paired tests, and the sample size an inconclusive one would need."""

import numpy as np
import pytest
from scipy import stats

from grainlab.errors import ConfigError
from grainlab.evaluation.verdicts import (
    INCONCLUSIVE,
    NOT_REPRODUCED,
    REPRODUCED,
    queries_needed,
    smallest_p,
    untestable_by_units,
    verdict,
    verdict_row,
)


def test_direction_and_significance_decide():
    assert verdict(0.03, 0.01, +1) == REPRODUCED
    assert verdict(-0.03, 0.01, +1) == NOT_REPRODUCED
    assert verdict(-0.03, 0.01, -1) == REPRODUCED
    assert verdict(0.03, 0.20, +1) == INCONCLUSIVE
    assert verdict(0.0, 0.0, +1) == INCONCLUSIVE
    with pytest.raises(ConfigError):
        verdict(0.1, 0.01, 0)


def test_queries_needed_matches_the_paired_power_formula():
    # σ = 0.2, δ = 0.05: ((1.95996 + 0.84162) · 4)² = 125.6 → 126
    assert queries_needed(0.2, 0.05) == 126
    assert queries_needed(0.2, -0.05) == 126
    assert queries_needed(0.0, 0.05) is None and queries_needed(0.2, 0.0) is None


def test_the_needed_size_gives_the_promised_power():
    """Simulated paired differences with the planned n detect the effect ~80% of the time."""
    rng = np.random.default_rng(0)
    sd, effect = 0.3, 0.06
    n = queries_needed(sd, effect)
    hits = sum(stats.ttest_1samp(rng.normal(effect, sd, n), 0).pvalue < 0.05 for _ in range(2000))
    assert 0.76 < hits / 2000 < 0.84


def test_a_row_carries_effect_interval_and_what_an_inconclusive_test_would_need():
    rng = np.random.default_rng(1)
    differences = rng.normal(0.01, 0.2, 60)
    row = verdict_row(differences, p_holm=0.4, direction=+1, paper_effect=0.05, n_resamples=500)
    assert row["verdict"] == INCONCLUSIVE and row["n"] == 60 and row["effect_for_power"] == "paper"
    assert row["ci_low"] <= row["effect"] <= row["ci_high"]
    assert row["queries_needed"] == queries_needed(float(differences.std(ddof=1)), 0.05)
    reproduced = verdict_row(differences + 0.2, p_holm=0.001, direction=+1, n_resamples=500)
    assert reproduced["verdict"] == REPRODUCED and reproduced["queries_needed"] is None


def test_smallest_p_enumerates_flips_then_is_floored_by_the_resamples():
    assert smallest_p(1) == 1.0 and smallest_p(3) == 2 / 8 and smallest_p(13, n_resamples=10_000) == 2 / 8192
    assert smallest_p(14, n_resamples=10_000) == 2 / 10_001  # 2^14 flips exceed the resamples drawn


def test_smallest_p_of_thousands_of_units_does_not_overflow():
    """2.0 ** 2655 overflows a float: LongRAG's 2,655 questions raised OverflowError in the verdicts."""
    assert smallest_p(2_655) == smallest_p(5_000) == 2 / 10_001
    assert untestable_by_units([2_655, 2_655, 48]) == [False, False, False]
