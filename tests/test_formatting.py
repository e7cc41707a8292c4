"""One formatter per kind of number (issue 57): what a reader sees in every table."""

import pandas as pd

from grainlab import formatting
from grainlab.experiments.tables import markdown_table


def test_each_kind_has_one_format():
    assert [formatting.p_value(p) for p in (0.0004, 0.001, 0.0048, 0.0050, 0.11, 1.0, float("nan"))] == \
        ["< 0.001", "0.001", "0.0048", "0.005", "0.11", "1", "—"]
    assert formatting.count(7874.0) == "7,874" and formatting.count(50.0) == "50"
    assert formatting.tokens(11579.46) == "11,579"
    assert formatting.share(0.923) == "92.3%"
    assert formatting.effect(0.0123, 0.006, 0.0201) == "+0.012 [+0.006, +0.020]"


def test_a_cell_is_formatted_by_its_columns_kind():
    assert formatting.cell("p (Holm)", 0.0002) == "< 0.001"
    assert formatting.cell("p_randomization_holm", 0.0479) == "0.048"
    assert formatting.cell("n", 50.0) == "50" and formatting.cell("queries needed", 115914.0) == "115,914"
    assert formatting.cell("mean prompt tokens", 4865.38) == "4,865" and formatting.cell("questions", 382.0) == "382"
    assert formatting.cell("pass", True) == "yes" and formatting.cell("delta", -0.00004, ".3f") == "0.000"
    assert formatting.cell("delta", -0.012, ".3f") == "-0.012" and formatting.cell("x", None) == "—"


def test_markdown_tables_use_the_formatters():
    table = pd.DataFrame({"n": [50.0], "p (Holm)": [0.0004], "pass": [True], "delta": [-0.0001]})
    assert markdown_table(table, ".3f").splitlines()[2] == "| 50 | < 0.001 | yes | 0.000 |"
