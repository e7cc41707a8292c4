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
