import pandas as pd
import pytest

from grainlab.errors import ConfigError
from grainlab.studies.token_limits import token_limit_table


def test_runs_whose_generations_hit_the_budget_are_counted_and_flagged():
    runs = pd.DataFrame({"model": ["m"] * 6 + ["n"] * 4, "setting": ["kv"] * 3 + ["qa"] * 3 + ["qa"] * 4,
                         "new_tokens": [64, 64, 12, 10, 64, 9, 3, 4, 5, 63]})
    table = token_limit_table(runs, 64).set_index(["model", "setting"])
    assert table.loc[("m", "kv"), "at_limit"] == 2 and table.loc[("m", "kv"), "share_at_limit"] == pytest.approx(2 / 3)
    assert table.loc[("m", "qa"), "at_limit"] == 1 and table.loc[("m", "qa"), "flagged"]
    assert table.loc[("n", "qa"), "at_limit"] == 0 and not table.loc[("n", "qa"), "flagged"]


def test_a_table_without_token_counts_is_refused_with_the_columns_named():
    with pytest.raises(ConfigError, match="new_tokens"):
        token_limit_table(pd.DataFrame({"model": ["m"], "setting": ["s"]}), 64)


def test_each_row_is_counted_against_the_budget_it_ran_under():
    runs = pd.DataFrame({"model": ["m"] * 4, "setting": ["qa", "qa", "kv", "kv"], "new_tokens": [64, 64, 64, 128],
                         "max_new_tokens": [64, 128, 128, 128]})
    table = token_limit_table(runs).set_index("setting")
    assert table.loc["qa", "at_limit"] == 1 and table.loc["qa", "max_new_tokens"] == "64/128"
    assert table.loc["kv", "at_limit"] == 1 and table.loc["kv", "max_new_tokens"] == "128"
    with pytest.raises(ConfigError, match="budget"):
        token_limit_table(runs.drop(columns="max_new_tokens"))
