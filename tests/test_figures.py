"""Figures are functions of stored tables: the registry, the stored-table reader, ``grainlab figures``."""

from __future__ import annotations

import ast
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from grainlab.errors import ConfigError
from grainlab.experiments import run_experiment
from grainlab.experiments.stored import MissingResults, stored_per_query
from grainlab.figures import FIGURES, StudyTables, draw_all, draw_figure, owner
from grainlab.figures.registry import binary_rows

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "figures"


def _toy_experiment(toy_mirror: Path, tmp_path: Path, cache, name: str = "chunk_size/full/scifact"):
    from grainlab.data import load_dataset
    from grainlab.studies import chunk_size

    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    systems = chunk_size.systems(["bm25"], [4, 8], "cl100k_base", "max")
    return run_experiment(data, systems, ["nDCG@10", "R@100"], name=name, results_dir=tmp_path / "results",
                          cache=cache, progress=False)


def test_stored_per_query_is_the_table_run_experiment_returned(toy_mirror, tmp_path, cache):
    result = _toy_experiment(toy_mirror, tmp_path, cache)
    (result.folder / "per_query.csv").unlink()  # the big concatenation is not committed: rebuilt from the parts
    rebuilt = stored_per_query(result.folder)
    pd.testing.assert_frame_equal(rebuilt, result.per_query, check_dtype=False)


def test_the_aggregate_rebuilt_from_the_stored_tables_is_the_engines_and_differences_are_named(toy_mirror, tmp_path,
                                                                                                 cache):
    from grainlab.experiments.stored import aggregate_differences, stored_aggregate

    result = _toy_experiment(toy_mirror, tmp_path, cache)
    pd.testing.assert_frame_equal(stored_aggregate(result.folder), result.aggregate, check_dtype=False)
    assert aggregate_differences(result.folder) == []
    committed = result.aggregate.drop(index=1)
    committed.loc[0, "count"] += 1
    committed.to_csv(result.folder / "aggregate.csv", index=False)
    first, dropped = result.aggregate.iloc[0], result.aggregate.iloc[1]
    assert sorted(aggregate_differences(result.folder)) == sorted([
        f"{dropped.system} · {dropped.stage} · {dropped.measure}: only in the per-query tables",
        f"{first.system} · {first.stage} · {first.measure}: committed mean {first['mean']:.6g} "
        f"(n={first['count'] + 1}), per-query tables give {first['mean']:.6g} (n={first['count']})"])


def test_a_damaged_or_missing_stored_table_is_one_line_naming_the_system(toy_mirror, tmp_path, cache):
    result = _toy_experiment(toy_mirror, tmp_path, cache)
    tables = sorted((result.folder / "per_query").glob("*.csv"))
    tables[0].write_text(tables[0].read_text()[:-4])  # truncated
    from grainlab.experiments.store import DamagedTable

    with pytest.raises(DamagedTable, match="checksum"):
        stored_per_query(result.folder)
    tables[0].unlink()
    with pytest.raises(MissingResults, match=r"no stored table for 'bm25\|fixed_tokens\(size=4"):
        stored_per_query(result.folder)
    with pytest.raises(MissingResults, match="manifest.json not found"):
        stored_per_query(tmp_path / "nowhere")


def test_binary_rows_rebuild_the_counts_and_refuse_a_measure_that_is_not_0_or_1():
    aggregate = pd.DataFrame({"system": ["a", "b"], "measure": ["R@5", "R@5"], "mean": [0.25, 2 / 3],
                              "count": [4, 3]})
    rows = binary_rows(aggregate)
    assert rows.groupby("system")["value"].agg(["sum", "count"]).to_dict("list") == {"sum": [1.0, 2.0],
                                                                                     "count": [4, 3]}
    assert set(rows["value"]) == {0.0, 1.0} and "mean" not in rows
    with pytest.raises(ValueError, match="not 0/1"):
        binary_rows(aggregate.assign(mean=[0.3, 0.5]))


def test_a_figure_drawn_from_stored_tables_is_written_and_a_missing_one_is_named(toy_mirror, tmp_path, cache):
    import matplotlib.pyplot as plt

    result = _toy_experiment(toy_mirror, tmp_path, cache)
    folder = result.folder.parent
    result.aggregate.to_csv(folder / "aggregate.csv", index=False)
    drawn = draw_figure("chunk_size_recall", folder, tmp_path / "figures", close=True)
    assert list(drawn) == ["chunk_size_recall"]
    assert (tmp_path / "figures" / "chunk_size_recall.png").stat().st_size > 0
    assert (tmp_path / "figures" / "chunk_size_recall.pdf").stat().st_size > 0
    with pytest.raises(ConfigError, match="unknown figure 'nope'"):
        draw_figure("nope", folder)
    redrawn = draw_all(tmp_path / "results", tmp_path / "all", studies=["chunk_size", "dense_x"], progress=False)
    assert [p.name for p in redrawn.written] == ["chunk_size_recall.png"]
    assert "no QA set was run" in redrawn.missing["chunk_size_recall_at1"]
    assert "long_encoder: no stored experiment" in redrawn.missing["chunk_size_long_encoder"]
    assert "results/dense_x/full" in redrawn.missing["dense_x_recall_at_k"]
    with pytest.raises(ConfigError, match="no figures registered for \\['nothing'\\]"):
        draw_all(tmp_path / "results", tmp_path / "all", studies=["nothing"])
    plt.close("all")


def test_a_tables_read_is_a_copy_so_one_figure_cannot_change_anothers_input(tmp_path):
    (tmp_path / "study" / "full").mkdir(parents=True)
    pd.DataFrame({"x": [1, 2]}).to_csv(tmp_path / "study" / "full" / "t.csv", index=False)
    tables = StudyTables(tmp_path / "study" / "full")
    first = tables.csv("t.csv")
    first.loc[0, "x"] = 99
    assert tables.csv("t.csv")["x"].tolist() == [1, 2]
    assert (tables.study, tables.profile) == ("study", "full")


def test_every_committed_figure_is_registered_and_every_registered_figure_is_committed():
    stems = sorted({p.stem for p in COMMITTED.iterdir() if p.suffix in (".png", ".pdf")})
    assert len(stems) >= 25
    assert [s for s in stems if owner(s) is None] == []
    for spec in FIGURES.values():
        members = [s for s in stems if owner(s) is spec]
        assert members, f"registered figure {spec.name!r} is not committed: run make figures"


def _shown_names() -> dict[str, str]:
    """Each ``show_figure("name", ...)`` call in the notebooks, with its notebook."""
    shown = {}
    for notebook in sorted((ROOT / "notebooks").glob("*.py")):
        for node in ast.walk(ast.parse(notebook.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("show_figure", "save_figure"):
                assert node.func.id == "show_figure", f"{notebook.name} saves a figure outside the registry"
                shown[node.args[0].value] = notebook.name
    return shown


def test_the_notebooks_draw_every_registered_figure_through_the_registry():
    """The notebooks and ``make figures`` call the same functions: every figure a notebook shows is
    registered under the study its notebook writes, and every registered figure is shown by one."""
    from grainlab.reproduce import NOTEBOOKS

    shown = _shown_names()
    assert sorted(shown) == sorted(FIGURES)
    for name, notebook in shown.items():
        assert NOTEBOOKS[FIGURES[name].study] == notebook.removesuffix(".py")


def test_every_committed_figure_was_drawn_by_the_current_drawing_code():
    """An edit to ``grainlab.plots`` or ``grainlab.figures`` is followed by ``make figures``
    (about a minute and a half; nothing is recomputed)."""
    from grainlab.plots import figure_stamp, plots_fingerprint

    stale = [p.name for p in sorted(COMMITTED.glob("*.png")) if figure_stamp(p) != plots_fingerprint()]
    assert stale == [], f"drawn by older drawing code: run make figures ({stale})"
    pdfs = [p for p in sorted(COMMITTED.glob("*.pdf")) if f"grainlab-plots={plots_fingerprint()}".encode()
            not in p.read_bytes()]
    assert pdfs == []


@pytest.mark.slow
def test_make_figures_redraws_every_committed_figure_from_the_committed_tables(tmp_path):
    """``grainlab figures`` on the committed results draws each committed figure again (pixels
    within matplotlib's comparison tolerance: CPUs may round a bootstrap's last bit differently),
    with no notebook run and no model loaded."""
    from matplotlib.testing.compare import compare_images

    from grainlab import cli

    results = tmp_path / "results"
    shutil.copytree(ROOT / "results", results, ignore=shutil.ignore_patterns("executed", "*.jsonl", "*.run"))
    assert cli.main(["figures", "--results", str(results), "--out", str(tmp_path / "figures")]) == 0
    committed = sorted(COMMITTED.glob("*.png"))
    for png in committed:
        redrawn = tmp_path / "figures" / png.name
        assert redrawn.exists(), png.name
        assert compare_images(str(png), str(redrawn), tol=2) is None, png.name
    assert sorted(p.name for p in (tmp_path / "figures").glob("*.png")) == [p.name for p in committed]


def test_grainlab_figures_exits_1_and_names_what_it_could_not_draw(tmp_path, capsys):
    from grainlab import cli

    (tmp_path / "results").mkdir()
    assert cli.main(["figures", "--results", str(tmp_path / "results"), "--out", str(tmp_path / "f"),
                     "--only", "lost_in_the_middle"]) == 1
    err = capsys.readouterr().err
    assert re.search(r"lost_in_the_middle_qa: not drawn: .*qa_accuracy_by_position.csv not found", err)



def test_drawing_a_figure_imports_no_model_runtime():
    """``make figures`` loads no model: the registry and every study's figure module import
    neither torch, transformers, onnxruntime nor llama.cpp."""
    code = ("import sys, grainlab.figures, grainlab.cli; "
            "print(sorted(m for m in ('torch', 'transformers', 'onnxruntime', 'llama_cpp', 'sentence_transformers') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_main_job_verifies_redraws_and_reports_from_the_stored_tables(toy_mirror, tmp_path, cache, monkeypatch,
                                                                          capsys):
    """``make reproduce`` (``grainlab reproduce --stored``): the sampled recompute, every figure
    whose tables are there redrawn (the others named, exit 1), the report written."""
    from grainlab import cli

    monkeypatch.setenv("GRAINLAB_MIRROR", str(toy_mirror))
    result = _toy_experiment(toy_mirror, tmp_path, cache)
    result.aggregate.to_csv(result.folder.parent / "aggregate.csv", index=False)
    litm = tmp_path / "results" / "lost_in_the_middle" / "full"  # a study whose derived tables are rebuilt
    shutil.copytree(Path(__file__).resolve().parents[1] / "results" / "lost_in_the_middle" / "full", litm)
    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(tmp_path / "figures"))
    status = cli.main(["reproduce", "--stored"])
    out, err = capsys.readouterr()
    assert "4 figures redrawn from the stored tables" in out  # the toy chunk-size figure, the three of 05
    assert re.search(r"(\d+) of \1 sampled rows reproduced on this machine", out)
    assert "chunk_size_long_encoder: not drawn" in err and status == 1
    assert (tmp_path / "figures" / "chunk_size_recall.png").exists()
    assert (tmp_path / "results" / "report.html").exists()
    record = json.loads((tmp_path / "results" / "main_job" / "runtime.json").read_text())
    assert record["rows"] == record["reproduced"] > 0 and record["figures"] == 4 and record["cpu"]
    assert "1 of 1 experiments' aggregate tables rebuilt from their stored per-query tables match" in out
    assert "9 of 9 derived study tables (positions, contrasts, verdicts) rebuilt from their stored runs match" in out
    assert "lost_in_the_middle/full: its data is not loadable here" in out  # the toy mirror has no NQ-open
    committed = pd.read_csv(result.folder / "aggregate.csv")
    committed.loc[0, "mean"] += 0.01  # a derived table that is not what its per-query tables give
    committed.to_csv(result.folder / "aggregate.csv", index=False)
    shapes = pd.read_csv(litm / "curve_shape.csv")
    shapes.assign(shape="flat").to_csv(litm / "curve_shape.csv", index=False)
    assert cli.main(["reproduce", "--stored"]) == 1
    out, err = capsys.readouterr()
    assert "0 of 1 experiments' aggregate tables" in out
    assert "8 of 9 derived study tables" in out and "lost_in_the_middle/full/curve_shape.csv: curve_shape.csv: row 0 shape" in err
    assert f"aggregate.csv: {committed.loc[0, 'system']} · {committed.loc[0, 'stage']} · {committed.loc[0, 'measure']}: " \
           "committed mean" in err
