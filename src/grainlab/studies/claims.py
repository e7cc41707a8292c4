"""A study's claims, each tested on paired per-query scores and given a computed verdict.

A :class:`Claim` names two arms of one study (``system`` and ``baseline``: two values of one
column of the tidy per-query table), the measure, the direction the paper predicts and — where the
paper gives one — its effect size. :func:`verdict_table` pairs the arms on the queries both
answered, runs the paired randomization test, Holm-corrects over the study's claims, and fills
the verdict columns (:func:`grainlab.evaluation.verdicts.verdict_row`). No verdict is typed in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from grainlab.errors import ConfigError
from grainlab.evaluation.significance import holm, randomization_test
from grainlab.evaluation.verdicts import verdict_row

VERDICT_COLUMNS = ("claim", "paper", "ours", "system", "baseline", "measure", "n", "effect", "ci_low", "ci_high",
                   "p", "p_holm", "verdict", "queries_needed", "paper_effect", "paper_effect_excluded", "deviation")


@dataclass(frozen=True)
class Claim:
    """One testable claim: ``system`` should beat ``baseline`` on ``measure`` (``direction`` +1)
    or lose to it (−1), on the per-query rows matching ``where`` (column → value)."""

    claim: str
    paper: str
    system: object
    baseline: object
    measure: str | None = None
    direction: int = 1
    paper_effect: float | None = None
    where: Mapping[str, object] = field(default_factory=dict)
    deviation: str = ""


def paired_scores(per_query: pd.DataFrame, claim: Claim, system_col: str = "system",
                  value_col: str = "value") -> tuple[np.ndarray, np.ndarray]:
    """The two arms' scores on the queries (``qid``) both have, in qid order."""
    rows = per_query
    if claim.measure is not None and "measure" in rows.columns:
        rows = rows[rows["measure"] == claim.measure]
    for column, wanted in claim.where.items():
        if column not in rows.columns:
            raise ConfigError(f"claim {claim.claim!r} filters on {column!r}, which the per-query table lacks "
                              f"(columns: {sorted(rows.columns)})")
        rows = rows[rows[column] == wanted]
    table = rows[rows[system_col].isin([claim.system, claim.baseline])].pivot_table(
        index="qid", columns=system_col, values=value_col, aggfunc="mean")
    if claim.system not in table.columns or claim.baseline not in table.columns:
        raise ConfigError(f"claim {claim.claim!r}: no per-query scores for {claim.system!r} and {claim.baseline!r} "
                          f"in column {system_col!r} (have {sorted(map(str, rows[system_col].unique()))})")
    both = table[[claim.system, claim.baseline]].dropna()
    return both[claim.system].to_numpy(dtype=float), both[claim.baseline].to_numpy(dtype=float)


def _ours(row: dict, scale: float) -> str:
    return (f"{scale * row['effect']:+.3g} [{scale * row['ci_low']:+.3g}, {scale * row['ci_high']:+.3g}], "
            f"n={row['n']}")


def verdict_table(per_query: pd.DataFrame, claims: Sequence[Claim], system_col: str = "system",
                  value_col: str = "value", scale: float = 1.0, n_resamples: int = 10_000,
                  seed: int = 0) -> pd.DataFrame:
    """One row per claim (columns :data:`VERDICT_COLUMNS`, plus the ``where`` columns): the paired
    effect ``system − baseline`` with its 95% bootstrap interval, the randomization p, Holm over
    these claims, the verdict and — when inconclusive — the queries a test would need to detect
    the paper's effect (else ours) with 80% power at the Bonferroni level α / (number of claims),
    the strictest step of Holm's correction.
    ``scale`` only formats the ``ours`` text (e.g. 100 for ×100 tables)."""
    if not claims:
        return pd.DataFrame(columns=list(VERDICT_COLUMNS))
    pairs = [paired_scores(per_query, claim, system_col, value_col) for claim in claims]
    empty = [c.claim for c, (a, _) in zip(claims, pairs) if a.size == 0]
    if empty:
        raise ConfigError(f"no query has scores for both arms of: {empty}")
    # one pair cannot be tested: p = 1, so its verdict is inconclusive
    p_raw = [randomization_test(a, b, n_resamples, seed) if a.size > 1 else 1.0 for a, b in pairs]
    p_adjusted = holm(p_raw)
    rows = []
    for claim, (a, b), p, p_holm in zip(claims, pairs, p_raw, p_adjusted):
        tested = verdict_row(a - b, p_holm, claim.direction, claim.paper_effect, n_resamples=n_resamples, seed=seed,
                             family_size=len(claims))
        row = {"claim": claim.claim, "paper": claim.paper, "system": str(claim.system),
               "baseline": str(claim.baseline), "measure": claim.measure or value_col, **dict(claim.where),
               **tested, "p": p, "paper_effect": claim.paper_effect, "deviation": claim.deviation}
        row["ours"] = _ours(row, scale)
        row["paper_effect_excluded"] = paper_effect_excluded(row)
        rows.append(row)
    table = pd.DataFrame(rows)
    return table[[*VERDICT_COLUMNS[:6], *where_columns(table), *VERDICT_COLUMNS[6:], "effect_for_power"]]


def where_columns(table: pd.DataFrame) -> list[str]:
    """The columns a verdict table has beyond :data:`VERDICT_COLUMNS`: the claims' filters (and any
    column a notebook added, such as ``family``)."""
    return [c for c in table.columns if c not in VERDICT_COLUMNS and c != "effect_for_power"]


MIN_PAIRS_TO_EXCLUDE = 20


def paper_effect_excluded(row: Mapping[str, object]) -> bool | None:
    """Whether the paper's effect lies outside our 95% interval (an inconclusive test that still
    rules the paper's effect size out); None without a paper effect, with fewer than
    :data:`MIN_PAIRS_TO_EXCLUDE` pairs, or when every pair differs alike (a zero-width bootstrap
    interval rules nothing out)."""
    effect = row.get("paper_effect")
    if effect is None or pd.isna(effect) or int(row["n"]) < MIN_PAIRS_TO_EXCLUDE:
        return None
    low, high = float(row["ci_low"]), float(row["ci_high"])
    if low == high:
        return None
    return not (low <= float(effect) <= high)


def view(table: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``columns`` of a verdict table, those it has (a run with no testable claim has only the
    verdict columns, not the claims' filters)."""
    return table[[c for c in columns if c in table.columns]]


def with_samples(table: pd.DataFrame, samples: Mapping[str, str]) -> pd.DataFrame:
    """``table`` with a ``sample`` column: the label of what each claim's ``dataset`` was sampled to
    (:func:`grainlab.data.sample_label`); a table with no testable claim has no ``dataset`` column
    and gets an empty one."""
    datasets = table["dataset"] if "dataset" in table.columns else pd.Series(index=table.index, dtype=object)
    return table.assign(sample=datasets.map(samples))


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many claims each verdict got (for a study's headline)."""
    return {str(k): int(v) for k, v in table["verdict"].value_counts().items()} if len(table) else {}
