"""Rank and score fusion of several runs (RRF, min-max and z-score weighted sums).

A run maps query id → ``[(id, score), ...]`` best first. Ranks start at 1; an id missing
from a run contributes nothing to its fused score; an id listed twice in one run for one
query is an error (it would be counted twice).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from grainlab.errors import ConfigError
from grainlab.retrieval.base import Run


def _check(runs: Sequence[Run], weights: Sequence[float] | None) -> list[float]:
    if not runs:
        raise ConfigError("fusion needs at least one run")
    if weights is not None and len(weights) != len(runs):
        raise ConfigError(f"{len(weights)} weights for {len(runs)} runs")
    for index, run in enumerate(runs):
        for qid, ranking in run.items():
            ids = [doc for doc, _ in ranking]
            if len(ids) != len(set(ids)):
                dup = next(d for d in ids if ids.count(d) > 1)
                raise ConfigError(f"run {index} lists {dup!r} twice for query {qid!r}; de-duplicate first")
    return list(weights) if weights is not None else [1.0] * len(runs)


def _sorted(scores: dict[str, float], depth: int | None) -> list[tuple[str, float]]:
    ranking = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranking[:depth] if depth else ranking


def rrf(runs: Sequence[Run], k: float = 60, weights: Sequence[float] | None = None,
        depth: int | None = None) -> Run:
    """Reciprocal rank fusion (Cormack et al. 2009): ``Σ_i w_i / (k + rank_i(d))``."""
    weights = _check(runs, weights)
    if k < 0:
        raise ConfigError(f"RRF k must be ≥ 0, got {k}")
    fused: Run = {}
    for qid in dict.fromkeys(q for run in runs for q in run):
        scores: dict[str, float] = {}
        for run, weight in zip(runs, weights):
            for rank, (doc, _) in enumerate(run.get(qid, []), start=1):
                scores[doc] = scores.get(doc, 0.0) + weight / (k + rank)
        fused[qid] = _sorted(scores, depth)
    return fused


def _normalise(values: np.ndarray, method: str) -> np.ndarray:
    if method == "minmax":
        span = values.max() - values.min()
        return (values - values.min()) / span if span > 0 else np.ones_like(values)
    if method == "zscore":
        std = values.std()
        return (values - values.mean()) / std if std > 0 else np.zeros_like(values)
    raise ConfigError(f"unknown score normalisation {method!r}; use 'minmax' or 'zscore'")


def score_fusion(runs: Sequence[Run], method: str = "minmax", weights: Sequence[float] | None = None,
                 depth: int | None = None) -> Run:
    """Weighted sum of per-query normalised scores (``minmax`` or ``zscore``); a missing id adds 0."""
    weights = _check(runs, weights)
    fused: Run = {}
    for qid in dict.fromkeys(q for run in runs for q in run):
        scores: dict[str, float] = {}
        for run, weight in zip(runs, weights):
            ranking = run.get(qid, [])
            if not ranking:
                continue
            normal = _normalise(np.array([s for _, s in ranking], dtype=np.float64), method)
            for (doc, _), value in zip(ranking, normal):
                scores[doc] = scores.get(doc, 0.0) + weight * float(value)
        fused[qid] = _sorted(scores, depth)
    return fused
