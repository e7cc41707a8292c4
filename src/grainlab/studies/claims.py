"""A study's claims, each tested on paired per-query scores and given a computed verdict.

A :class:`Claim` names two arms of one study (``system`` and ``baseline``: two values of one
column of the tidy per-query table), the measure, the direction the paper predicts and — where the
paper gives one — its effect size. :func:`verdict_table` pairs the arms on the queries both
answered, runs the paired randomization test, Holm-corrects over the study's claims, and fills
the verdict columns (:func:`grainlab.evaluation.verdicts.verdict_row`). No verdict is typed in.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from grainlab.errors import ConfigError, DuplicateContrastWarning
from grainlab.evaluation.significance import cluster_randomization_test, holm, randomization_test
from grainlab.evaluation.verdicts import (
    UNTESTABLE_CLUSTERS,
    UNTESTABLE_TRUNCATED,
    at_bound,
    clusters_needed,
    untestable_by_units,
    verdict_row,
)
from grainlab.studies.token_limits import FLAG_SHARE

VERDICT_COLUMNS = ("claim", "paper", "ours", "system", "baseline", "measure", "n", "effect", "ci_low", "ci_high",
                   "p", "p_holm", "verdict", "queries_needed", "paper_effect", "paper_effect_excluded", "deviation")
CLUSTER_COLUMNS = ("cluster", "clusters", "design_effect", "clusters_needed")
LIMIT_COLUMNS = ("share_at_limit",)
"""Reader tables only (rows with ``new_tokens`` and ``max_new_tokens``): the larger of the two
arms' shares of generations that stopped at the token limit."""
SPEC_COLUMNS = ("dataset", "retriever", "chunker", "aggregate", "stage")
"""The columns of an engine per-query table that identify a system (retriever and chunker required)."""


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


def claim_rows(per_query: pd.DataFrame, claim: Claim) -> pd.DataFrame:
    """The per-query rows a claim reads: its measure and its ``where`` filters."""
    rows = per_query
    if claim.measure is not None and "measure" in rows.columns:
        rows = rows[rows["measure"] == claim.measure]
    for column, wanted in claim.where.items():
        if column not in rows.columns:
            raise ConfigError(f"claim {claim.claim!r} filters on {column!r}, which the per-query table lacks "
                              f"(columns: {sorted(rows.columns)})")
        rows = rows[rows[column] == wanted]
    return rows


def paired_scores(per_query: pd.DataFrame, claim: Claim, system_col: str = "system",
                  value_col: str = "value") -> tuple[np.ndarray, np.ndarray]:
    """The two arms' scores on the queries (``qid``) both have, in qid order."""
    a, b, _ = paired_with_clusters(per_query, claim, system_col, value_col)
    return a, b


def paired_with_clusters(per_query: pd.DataFrame, claim: Claim, system_col: str = "system",
                         value_col: str = "value", cluster_col: str | None = None
                         ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """:func:`paired_scores` and, with ``cluster_col``, each query's cluster label (the unit its
    questions share; one label per query, else an error)."""
    rows = claim_rows(per_query, claim)
    table = rows[rows[system_col].isin([claim.system, claim.baseline])].pivot_table(
        index="qid", columns=system_col, values=value_col, aggfunc="mean")
    if claim.system not in table.columns or claim.baseline not in table.columns:
        raise ConfigError(f"claim {claim.claim!r}: no per-query scores for {claim.system!r} and {claim.baseline!r} "
                          f"in column {system_col!r} (have {sorted(map(str, rows[system_col].unique()))})")
    both = table[[claim.system, claim.baseline]].dropna()
    clusters = None
    if cluster_col is not None:
        if cluster_col not in rows.columns:
            raise ConfigError(f"claim {claim.claim!r}: cluster column {cluster_col!r} is not in the per-query table "
                              f"(columns: {sorted(rows.columns)})")
        labels = rows.groupby("qid")[cluster_col].agg(lambda v: v.astype(str).unique().tolist())
        mixed = labels[labels.map(len) > 1]
        if len(mixed):
            raise ConfigError(f"claim {claim.claim!r}: query {mixed.index[0]!r} has several {cluster_col!r} values "
                              f"{mixed.iloc[0]}; a query belongs to one cluster")
        clusters = labels.loc[both.index].map(lambda v: v[0]).to_numpy()
    return both[claim.system].to_numpy(dtype=float), both[claim.baseline].to_numpy(dtype=float), clusters


def share_at_limit(per_query: pd.DataFrame, claim: Claim, system_col: str = "system") -> float | None:
    """The larger of the two arms' shares of generations that used their whole token budget
    (``new_tokens ≥ max_new_tokens``) on the claim's rows; ``None`` for tables that are not reader
    runs (no ``new_tokens`` and ``max_new_tokens`` columns)."""
    rows = claim_rows(per_query, claim)
    if not {"new_tokens", "max_new_tokens"} <= set(rows.columns):
        return None
    shares = []
    for label in (claim.system, claim.baseline):
        arm = rows[rows[system_col] == label]
        generated = arm.dropna(subset=["new_tokens", "max_new_tokens"])
        shares.append(float((generated["new_tokens"] >= generated["max_new_tokens"]).mean()) if len(generated) else 0.0)
    return max(shares)


def contrast_key(per_query: pd.DataFrame, claim: Claim, system_col: str = "system") -> tuple | None:
    """What a claim really compares: its measure and, for each arm, the engine systems behind its
    label (:data:`SPEC_COLUMNS`) and the queries it is scored on — two claims with one key are the
    same contrast under two names. ``None`` for tables that do not name systems by retriever and
    chunker (reader tables, whose arms differ by columns such as setting or budget)."""
    rows = claim_rows(per_query, claim)
    if not {"retriever", "chunker"} <= set(rows.columns):
        return None
    specs = [c for c in SPEC_COLUMNS if c in rows.columns]

    def arm(label: object) -> tuple:
        chosen = rows[rows[system_col] == label]
        return (tuple(sorted(map(tuple, chosen[specs].astype(str).drop_duplicates().to_numpy()))),
                tuple(sorted(chosen["qid"].astype(str).unique())))

    return (claim.measure, arm(claim.system), arm(claim.baseline))


def unique_contrasts(per_query: pd.DataFrame, claims: Sequence[Claim], system_col: str = "system") -> list[Claim]:
    """A Holm family holds each contrast once: of two claims over the same systems (by spec, not
    by label) and measure, the first is kept and the other dropped with a
    :class:`~grainlab.errors.DuplicateContrastWarning` naming both."""
    seen: dict[tuple, str] = {}
    kept = []
    for claim in claims:
        key = contrast_key(per_query, claim, system_col)
        if key is not None and key in seen:
            warnings.warn(f"grainlab: claims {seen[key]!r} and {claim.claim!r} test the same contrast (the same "
                          f"systems and measure under two labels); the family keeps {seen[key]!r} once",
                          DuplicateContrastWarning, stacklevel=3)
            continue
        if key is not None:
            seen[key] = claim.claim
        kept.append(claim)
    return kept


def _ours(row: dict, scale: float) -> str:
    return (f"{scale * row['effect']:+.3g} [{scale * row['ci_low']:+.3g}, {scale * row['ci_high']:+.3g}], "
            f"n={row['n']}")


def verdict_table(per_query: pd.DataFrame, claims: Sequence[Claim], system_col: str = "system",
                  value_col: str = "value", scale: float = 1.0, n_resamples: int = 10_000,
                  seed: int = 0, cluster_col: str | None = None) -> pd.DataFrame:
    """One row per claim (columns :data:`VERDICT_COLUMNS`, plus the ``where`` columns): the paired
    effect ``system − baseline`` with its 95% bootstrap interval, the randomization p, Holm over
    these claims, the verdict and — when inconclusive — the queries a test would need to detect
    the paper's effect (else ours) with 80% power at the Bonferroni level α / (number of claims),
    the strictest step of Holm's correction.
    ``scale`` only formats the ``ours`` text (e.g. 100 for ×100 tables).
    ``cluster_col`` names the unit questions share (gold document, article, stitched document):
    the interval and the test then resample and flip whole clusters, and the ``cluster``,
    ``clusters`` and ``design_effect`` columns say so (``question``, n, 1 without it).
    A contrast whose arms are both 0 (or 1) everywhere is ``untestable (floor)`` (``ceiling``),
    one whose reader runs stopped at the token limit more often than :data:`FLAG_SHARE` is
    ``untestable (truncated)`` (``share_at_limit`` says how often); both stay out of the Holm
    family, and the same contrast twice is kept once (:func:`unique_contrasts`)."""
    if not claims:
        return pd.DataFrame(columns=[*VERDICT_COLUMNS, *CLUSTER_COLUMNS])
    claims = unique_contrasts(per_query, claims, system_col)
    pairs = [paired_with_clusters(per_query, claim, system_col, value_col, cluster_col) for claim in claims]
    empty = [c.claim for c, (a, _, _) in zip(claims, pairs) if a.size == 0]
    if empty:
        raise ConfigError(f"no query has scores for both arms of: {empty}")
    limit_shares = [share_at_limit(per_query, claim, system_col) for claim in claims]
    bounded = [UNTESTABLE_TRUNCATED if share is not None and share > FLAG_SHARE else at_bound(a, b)
               for (a, b, _), share in zip(pairs, limit_shares)]

    def p_value(a: np.ndarray, b: np.ndarray, clusters: np.ndarray | None) -> float:
        if a.size < 2:  # one pair cannot be tested: p = 1, so its verdict is inconclusive
            return 1.0
        if clusters is None:
            return randomization_test(a, b, n_resamples, seed)
        return cluster_randomization_test(a, b, clusters, n_resamples, seed)

    open_claims = [i for i, bound in enumerate(bounded) if bound is None]
    units = [int(np.unique(pairs[i][2]).size) if pairs[i][2] is not None else int(pairs[i][0].size)
             for i in open_claims]
    for i, flag in zip(open_claims, untestable_by_units(units, n_resamples)):
        if flag:
            bounded[i] = UNTESTABLE_CLUSTERS
    p_raw = [1.0 if bound else p_value(a, b, c) for (a, b, c), bound in zip(pairs, bounded)]
    testable = [i for i, bound in enumerate(bounded) if bound is None]
    p_adjusted = [1.0] * len(claims)
    for i, adjusted in zip(testable, holm([p_raw[i] for i in testable])):
        p_adjusted[i] = adjusted
    rows = []
    for claim, (a, b, clusters), p, p_holm, bound, limit_share in zip(claims, pairs, p_raw, p_adjusted, bounded,
                                                                      limit_shares):
        tested = verdict_row(a - b, p_holm, claim.direction, claim.paper_effect, n_resamples=n_resamples, seed=seed,
                             family_size=max(len(testable), 1), clusters=clusters)
        if bound:
            tested.update(verdict=bound, queries_needed=None, clusters_needed=None)
        if bound == UNTESTABLE_CLUSTERS:
            tested["clusters_needed"] = clusters_needed(len(open_claims))  # for the family as declared
        tested["cluster"] = cluster_col or "question"
        row = {"claim": claim.claim, "paper": claim.paper, "system": str(claim.system),
               "baseline": str(claim.baseline), "measure": claim.measure or value_col, **dict(claim.where),
               **tested, "p": p, "paper_effect": claim.paper_effect, "deviation": claim.deviation}
        row["ours"] = _ours(row, scale)
        row["paper_effect_excluded"] = paper_effect_excluded(row)
        if limit_share is not None:
            row["share_at_limit"] = limit_share
        rows.append(row)
    table = pd.DataFrame(rows)
    limit = [c for c in LIMIT_COLUMNS if c in table.columns]
    return table[[*VERDICT_COLUMNS[:6], *where_columns(table), *VERDICT_COLUMNS[6:], *CLUSTER_COLUMNS, *limit,
                  "effect_for_power"]]


def where_columns(table: pd.DataFrame) -> list[str]:
    """The columns a verdict table has beyond :data:`VERDICT_COLUMNS`: the claims' filters (and any
    column a notebook added, such as ``family``)."""
    return [c for c in table.columns
            if c not in VERDICT_COLUMNS and c not in CLUSTER_COLUMNS and c not in LIMIT_COLUMNS
            and c != "effect_for_power"]


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


def with_clusters(per_query: pd.DataFrame, clusters: Mapping[str, Mapping[str, str]], column: str) -> pd.DataFrame:
    """``per_query`` with ``column``: each query's cluster (e.g. its stitched document) from
    ``clusters`` (dataset → qid → label, :func:`grainlab.data.gold_clusters`), for
    ``verdict_table(..., cluster_col=column)``; a query without a label is an error naming it."""
    labels = [clusters.get(d, {}).get(q) for d, q in zip(per_query["dataset"], per_query["qid"])]
    missing = [(d, q) for d, q, label in zip(per_query["dataset"], per_query["qid"], labels) if label is None]
    if missing:
        raise ConfigError(f"no {column!r} label for {len(missing)} per-query rows, e.g. dataset {missing[0][0]!r} "
                          f"query {missing[0][1]!r}")
    return per_query.assign(**{column: labels})


def verdict_counts(table: pd.DataFrame) -> dict[str, int]:
    """How many claims each verdict got (for a study's headline)."""
    return {str(k): int(v) for k, v in table["verdict"].value_counts().items()} if len(table) else {}
