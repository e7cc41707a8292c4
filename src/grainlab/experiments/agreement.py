"""When two computations of the same experiment agree, and what a rounding difference can change.

Two runs of one system are computed by different processes — the serial loop and a Ray worker, or
two machines — and a dense encoder's floating-point sums depend on how the matrix products are
split over threads and SIMD lanes (AVX2 vs AVX-512, Intel vs AMD kernels). The same inputs can then
give scores that differ in the 7th decimal (0.5805533528 vs 0.5805534124). Such a difference can
only reorder units whose scores are themselves that close; a measure changes only when such a
near-tie straddles a cut-off and its units differ in relevance. So the promise is:

* **runs** agree when every retrieved unit's score differs by at most ``tolerance`` and the scores
  at each rank do too (:func:`ranking_differences`): any reordering is among near-ties;
* **per-query values** are equal wherever the two rankings are identical, and may differ only for
  queries whose rankings reorder a near-tie (:func:`table_differences` is told which);
* **aggregate and significance tables** are equal wherever no query of theirs reorders.

This module says where two computations break that promise; an empty answer means they keep it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import pandas as pd

from grainlab.types import Run

SCORE_TOLERANCE = 1e-6
"""The largest score difference read as rounding: float32 cosine similarities carry about 7
significant digits, and the differences seen between thread counts and CPUs are ≤ 1e-7."""


def ranking_differences(ours: Run, theirs: Run, tolerance: float = SCORE_TOLERANCE) -> list[str]:
    """Why ``theirs`` is not ``ours`` up to rounding (empty when it is): a query only one answers,
    a unit whose two scores differ by more than ``tolerance``, or a rank whose scores do (which is
    how a reordering beyond near-ties shows)."""
    problems = []
    for qid in sorted(set(ours) | set(theirs)):
        a, b = ours.get(qid, []), theirs.get(qid, [])
        if len(a) != len(b):
            problems.append(f"query {qid}: {len(a)} vs {len(b)} units retrieved")
            continue
        theirs_score = dict(b)
        for doc, score in a:
            if doc in theirs_score and abs(score - theirs_score[doc]) > tolerance:
                problems.append(f"query {qid}: unit {doc} scores {score!r} vs {theirs_score[doc]!r}")
        for rank, ((doc_a, score_a), (doc_b, score_b)) in enumerate(zip(a, b), start=1):
            if doc_a != doc_b and abs(score_a - score_b) > tolerance:
                problems.append(f"query {qid}: rank {rank} holds {doc_a} ({score_a!r}) vs {doc_b} ({score_b!r}), "
                                f"not a near-tie")
    return problems


def reordered_queries(ours: Run, theirs: Run) -> set[str]:
    """The queries whose two rankings list units in a different order (near-tie swaps included)."""
    return {qid for qid in set(ours) | set(theirs)
            if [d for d, _ in ours.get(qid, [])] != [d for d, _ in theirs.get(qid, [])]}


def table_differences(ours: pd.DataFrame, theirs: pd.DataFrame, keys: Iterable[str],
                      exempt: Mapping[str, set[str]] | None = None, value_columns: Iterable[str] | None = None,
                      ) -> list[str]:
    """Rows of two tables with the same ``keys`` whose values differ, other than rows of a
    ``system`` whose reordered queries (``exempt[system]``) explain it: a per-query row of such a
    query, or an aggregate row of such a system. Values are compared exactly (the same ranking
    gives the same measure); ``value_columns`` defaults to every column that is not a key."""
    keys = list(keys)
    exempt = exempt or {}
    columns = list(value_columns) if value_columns is not None else [c for c in ours.columns if c not in keys]
    if set(ours.columns) != set(theirs.columns):
        return [f"columns differ: {sorted(set(ours.columns) ^ set(theirs.columns))}"]
    merged = ours.merge(theirs, on=keys, how="outer", suffixes=("", " (theirs)"), indicator=True)
    problems = []
    for _, row in merged.iterrows():
        label = ", ".join(f"{k}={row[k]}" for k in keys)
        if row["_merge"] != "both":
            problems.append(f"{label}: only in {'ours' if row['_merge'] == 'left_only' else 'theirs'}")
            continue
        if _explained(row, exempt):
            continue
        for column in columns:
            a, b = row[column], row[f"{column} (theirs)"]
            if not (a == b or (pd.isna(a) and pd.isna(b))):
                problems.append(f"{label}: {column} {a!r} vs {b!r}")
    return problems


def _explained(row: pd.Series, exempt: Mapping[str, set[str]]) -> bool:
    """Whether a near-tie reordering can explain a difference in ``row``."""
    systems = [str(row[c]) for c in ("system", "baseline") if c in row.index]
    if "qid" in row.index:
        return any(str(row["qid"]) in exempt.get(system, set()) for system in systems)
    return any(exempt.get(system) for system in systems)
