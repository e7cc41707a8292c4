"""Helpers that reshape tidy result tables for figures and comparison tables."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from grainlab.evaluation.significance import (
    bootstrap_ci,
    compare_to_baseline,
    holm,
    paired_comparison,
)
from grainlab.experiments.systems import retriever_label
from grainlab.spec import parse_spec


def split_cutoff(table: pd.DataFrame, column: str = "measure") -> pd.DataFrame:
    """``table`` with the measure name (``measure_name``) and its integer cutoff (``k``) split from
    ``column``: ``AnswerRecall@5`` → ``AnswerRecall``, 5 (``k`` is NaN for a measure without one,
    and then a float column)."""
    parts = table[column].str.split("@", n=1)
    k = pd.to_numeric(parts.str[1])
    return table.assign(measure_name=parts.str[0], k=k.astype(int) if k.notna().all() else k)


def best_rows(aggregate: pd.DataFrame, measure: str, by: Sequence[str]) -> pd.DataFrame:
    """The row with the highest mean ``measure`` within each ``by`` group."""
    data = aggregate[aggregate["measure"] == measure]
    return data.loc[data.groupby(list(by))["mean"].idxmax()].reset_index(drop=True)


def significance_by_group(per_query: pd.DataFrame, measure: str, by: Sequence[str],
                          baseline: str = "best", n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Within each group (e.g. dataset × retriever) compare every system with the group's
    baseline — its best system when ``baseline == "best"`` — with Holm correction per group."""
    frames = []
    data = per_query[per_query["measure"] == measure]
    for key, group in data.groupby(list(by), sort=False):
        means = group.groupby("system")["value"].mean()
        base = means.idxmax() if baseline == "best" else baseline
        result = compare_to_baseline(group, base, measure, n_resamples=n_resamples, seed=seed)
        for column, value in zip(by, key if isinstance(key, tuple) else (key,)):
            result.insert(0, column, value)
        frames.append(result)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def gate_table(aggregate: pd.DataFrame, gates: dict[str, tuple[float, float, str]],
               measure: str = "nDCG@10") -> pd.DataFrame:
    """Measured vs expected for sanity gates keyed by ``bm25`` or a dense model id."""
    rows = []
    data = aggregate[aggregate["measure"] == measure]
    for _, row in data.iterrows():
        name, params = parse_spec(row["retriever"])
        key = str(params.get("model", name))
        if key not in gates:
            continue
        expected, tolerance, source = gates[key]
        rows.append({"retriever": retriever_label(row["retriever"]), "measure": measure,
                     "ours": round(row["mean"], 4), "expected": expected, "tolerance": tolerance,
                     "pass": abs(row["mean"] - expected) <= tolerance, "source": source})
    return pd.DataFrame(rows)


def markdown_table(table: pd.DataFrame, floatfmt: str = ".3f") -> str:
    """A pipe table without the optional ``tabulate`` dependency, each cell by its column's kind
    (``grainlab.formatting``: p-values, counts, tokens, booleans; other floats in ``floatfmt``)."""
    from grainlab.formatting import cell

    columns = [str(c) for c in table.columns]
    header = "| " + " | ".join(columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    body = ["| " + " | ".join(cell(c, v, floatfmt) if not isinstance(v, int) or isinstance(v, bool) else str(v)
                              for c, v in zip(columns, row)) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *body])


def means_with_ci(runs: pd.DataFrame, by: str | Sequence[str], measures: Sequence[str], n_resamples: int = 10_000,
                  seed: int = 0) -> pd.DataFrame:
    """One row per value of ``by`` (a column or several; first-seen order): its number of rows
    ``n`` and, for each measure, the mean with a 95% percentile bootstrap interval
    (``<measure>_low``/``_high``)."""
    columns = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, group in runs.groupby(columns, sort=False, dropna=False):
        row: dict[str, object] = dict(zip(columns, key if isinstance(key, tuple) else (key,)))
        row["n"] = len(group)
        for measure in measures:
            values = group[measure].to_numpy(dtype=float)
            low, high = bootstrap_ci(values, n_resamples=n_resamples, seed=seed)
            row.update({measure: values.mean(), f"{measure}_low": low, f"{measure}_high": high})
        rows.append(row)
    return pd.DataFrame(rows)


def paired_between(runs: pd.DataFrame, column: str, pairs: Sequence[tuple[str, str]], value: str,
                   by: str | Sequence[str], n_resamples: int = 10_000, seed: int = 0) -> pd.DataFrame:
    """Within each ``by`` group (e.g. a setting), paired comparisons of ``value`` between two values
    of ``column`` (e.g. two readers: ``(larger, smaller)``) over the ``qid`` s both answered:
    delta, bootstrap CI, wins/ties/losses, randomization p, Holm over every row."""
    columns = [by] if isinstance(by, str) else list(by)
    rows = []
    for key, group in runs.groupby(columns, sort=False):
        named = dict(zip(columns, key if isinstance(key, tuple) else (key,)))
        per_query = group.rename(columns={column: "system", value: "value"}).assign(measure=value)
        for system, baseline in pairs:
            both = set(per_query.loc[per_query["system"] == system, "qid"]) & \
                set(per_query.loc[per_query["system"] == baseline, "qid"])
            if not both:
                continue
            shared = per_query[per_query["qid"].isin(both) & per_query["system"].isin([system, baseline])]
            result = paired_comparison(shared[["qid", "system", "measure", "value"]], [(system, baseline)], value,
                                       n_resamples=n_resamples, seed=seed)
            rows.append(result.assign(n=len(both), **named))
    if not rows:
        return pd.DataFrame()
    result = pd.concat(rows, ignore_index=True).rename(columns={"system": column, "baseline": f"baseline_{column}"})
    result["p_randomization_holm"] = holm(result["p_randomization"].tolist())
    result["p_ttest_holm"] = holm(result["p_ttest"].tolist())
    return result[[*columns, column, f"baseline_{column}", *[c for c in result.columns
                                                               if c not in (*columns, column, f"baseline_{column}")]]]

