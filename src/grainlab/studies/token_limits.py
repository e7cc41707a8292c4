"""Reader generations cut by the token limit: the share per run, and which runs to flag.

A generation that stops because it reached ``max_new_tokens`` may have been cut before its
answer (a 36-character UUID the model starts by restating its key). Every reader table records
``new_tokens``; :func:`token_limit_table` counts, per run, the generations that used the whole
budget, and flags a run above :data:`FLAG_SHARE` — such a run measures the budget, not the reader.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from grainlab.errors import ConfigError

FLAG_SHARE = 0.02


def token_limit_table(runs: pd.DataFrame, max_new_tokens: int | None = None,
                      by: Sequence[str] = ("model", "setting"), flag_share: float = FLAG_SHARE) -> pd.DataFrame:
    """One row per ``by`` group: ``generations``, ``at_limit`` (``new_tokens ≥ max_new_tokens``),
    ``share_at_limit``, the budget and ``flagged`` (share above ``flag_share``). The budget is each
    row's ``max_new_tokens`` column (reader tables record it), else the ``max_new_tokens`` given."""
    missing = [c for c in ("new_tokens", *by) if c not in runs.columns]
    if missing:
        raise ConfigError(f"a reader table needs columns {missing} to count generations cut by the token limit")
    if "max_new_tokens" in runs.columns:
        budget = runs["max_new_tokens"]
    elif max_new_tokens is None:
        raise ConfigError("a reader table without a max_new_tokens column needs the budget it ran under")
    else:
        budget = pd.Series(max_new_tokens, index=runs.index)
    if (budget < 1).any():
        raise ConfigError(f"max_new_tokens must be positive, got {int(budget.min())}")
    table = (runs.assign(at_limit=runs["new_tokens"] >= budget, max_new_tokens=budget)
             .groupby(list(by), sort=False)
             .agg(generations=("at_limit", "size"), at_limit=("at_limit", "sum"),
                  max_new_tokens=("max_new_tokens", lambda b: "/".join(map(str, sorted(set(b.astype(int)))))))
             .reset_index())
    table["at_limit"] = table["at_limit"].astype(int)
    table["share_at_limit"] = table["at_limit"] / table["generations"]
    table["flagged"] = table["share_at_limit"] > flag_share
    return table
