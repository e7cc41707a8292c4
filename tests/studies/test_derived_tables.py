"""A study's derived tables rebuilt from its stored runs: the committed Lost in the Middle tables
are what its runs give, a changed derivation is caught, and a committed table is rewritten only
when the rebuilt one proves it superseded (columns added, every committed value the same)."""

import shutil
from functools import partial
from pathlib import Path

import pandas as pd
import pytest

from grainlab.cli import main
from grainlab.data import load_dataset
from grainlab.errors import DatasetNotFound
from grainlab.experiments.stored import table_differences
from grainlab.studies import lost_in_the_middle
from grainlab.studies.derived import (
    derived_differences,
    derived_runs,
    only_added_columns,
    write_superseded,
)

LOAD = partial(load_dataset, allow_download=False)
COMMITTED = Path(__file__).resolve().parents[2] / "results" / "lost_in_the_middle" / "full"
TABLES = {"qa_accuracy_by_position.csv", "qa_position_contrasts.csv", "qa_reader_tests.csv", "qa_behaviour.csv",
          "kv_accuracy_by_position.csv", "kv_position_contrasts.csv", "token_limits.csv", "verdicts.csv",
          "curve_shape.csv"}


@pytest.fixture
def results(tmp_path) -> Path:
    shutil.copytree(COMMITTED, tmp_path / "lost_in_the_middle" / "full")
    return tmp_path


def _csv(tmp_path: Path, frame: pd.DataFrame) -> Path:
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    return path


def test_table_differences_names_each_kind_of_change(tmp_path):
    path = _csv(tmp_path, pd.DataFrame({"a": ["x", "y"], "b": [0.5, float("nan")]}))
    assert table_differences(pd.DataFrame({"a": ["x", "y"], "b": [0.5 + 1e-12, float("nan")]}), path) == []
    assert table_differences(pd.DataFrame({"a": ["x", "z"], "b": [0.5, float("nan")]}), path) == [
        "t.csv: row 1 a: committed 'y', rebuilt 'z'"]
    assert table_differences(pd.DataFrame({"a": ["x", "y"], "b": [0.5, 0.0]}), path) == [
        "t.csv: row 1 b: committed nan, rebuilt 0.0"]
    assert table_differences(pd.DataFrame({"a": ["x"], "b": [0.5]}), path) == ["t.csv: 2 rows committed, 1 rebuilt"]
    assert table_differences(pd.DataFrame({"a": ["x", "y"], "b": [0.5, None], "c": [1, 2]}), path) == [
        "t.csv: columns added c"]
    assert table_differences(pd.DataFrame({"b": [0.5, None], "a": ["x", "y"]}), path) == [
        "t.csv: columns in another order"]
    assert table_differences(pd.DataFrame({"a": ["x"]}), tmp_path / "none.csv") == ["none.csv: not committed"]


def test_only_added_columns_is_the_one_proof_of_supersession(tmp_path):
    path = _csv(tmp_path, pd.DataFrame({"a": [1, 2]}))
    assert only_added_columns(pd.DataFrame({"a": [1, 2], "new": [None, None]}), path)
    assert not only_added_columns(pd.DataFrame({"a": [1, 3], "new": [None, None]}), path)
    assert not only_added_columns(pd.DataFrame({"a": [1, 2]}), path)  # nothing to supersede
    assert not only_added_columns(pd.DataFrame({"new": [1, 2]}), path)


def test_the_committed_tables_are_what_the_stored_runs_give(results):
    assert [(folder.parent.name, rebuild) for folder, rebuild in derived_runs(results)] == [
        ("lost_in_the_middle", lost_in_the_middle.derived_tables)]
    differences = derived_differences(results, LOAD)
    assert {name.rsplit("/", 1)[1] for name in differences} == TABLES
    assert all(problems == [] for problems in differences.values()), differences


@pytest.mark.mirror
def test_every_committed_derived_table_is_what_its_stored_runs_give(mirror):
    results = COMMITTED.parents[1]
    studies = {folder.parent.name for folder, _ in derived_runs(results)}
    assert studies >= {"lost_in_the_middle", "hybrid_rerank", "longrag"}
    differences = derived_differences(results, partial(load_dataset, mirror=mirror, allow_download=False))
    assert {"hybrid_rerank/full/significance.csv", "hybrid_rerank/full/verdicts.csv", "longrag/full/verdicts.csv",
            "longrag/full/answer_recall.csv", "longrag/full/reader_em.csv"} <= set(differences)
    assert all(problems == [] for problems in differences.values()), differences


def test_a_changed_derivation_without_a_re_run_is_caught(results, monkeypatch):
    real = lost_in_the_middle.accuracy_by_position
    monkeypatch.setattr(lost_in_the_middle, "accuracy_by_position",
                        lambda runs, n_resamples, seed: real(runs, n_resamples=n_resamples, seed=seed + 1))
    differences = derived_differences(results, LOAD)
    changed = {name.rsplit("/", 1)[1] for name, problems in differences.items() if problems}
    assert "qa_accuracy_by_position.csv" in changed  # its bootstrap intervals moved
    assert changed <= {"qa_accuracy_by_position.csv", "kv_accuracy_by_position.csv"}
    assert main(["tables", "--results", str(results)]) == 1


def test_write_rewrites_added_columns_and_refuses_changed_values(results):
    folder = results / "lost_in_the_middle" / "full"
    verdicts = pd.read_csv(folder / "verdicts.csv")
    verdicts.drop(columns=["clusters_needed"]).to_csv(folder / "verdicts.csv", index=False)  # an older run's table
    shapes = pd.read_csv(folder / "curve_shape.csv")
    shapes.assign(shape="flat").to_csv(folder / "curve_shape.csv", index=False)  # a changed value
    written, refused = write_superseded(results, LOAD)
    assert written == [folder / "verdicts.csv"] and list(refused) == ["lost_in_the_middle/full/curve_shape.csv"]
    assert table_differences(pd.read_csv(COMMITTED / "verdicts.csv"), folder / "verdicts.csv") == []
    assert (pd.read_csv(folder / "curve_shape.csv")["shape"] == "flat").all()  # kept, never overwritten
    assert refused["lost_in_the_middle/full/curve_shape.csv"] == ["shape changed in 6 rows"]
    assert main(["tables", "--results", str(results), "--write"]) == 1
    written, refused = write_superseded(results, LOAD, accept=["lost_in_the_middle/full/curve_shape"])  # reviewed
    assert written == [folder / "curve_shape.csv"] and refused == {}
    assert table_differences(pd.read_csv(COMMITTED / "curve_shape.csv"), folder / "curve_shape.csv") == []


def test_tables_says_what_to_do_when_no_study_rebuilds(tmp_path, capsys):
    assert main(["tables", "--results", str(tmp_path)]) == 2
    assert "no study under the results folder rebuilds its derived tables" in capsys.readouterr().err
    assert main(["tables", "--results", str(tmp_path), "--accept", "x"]) == 2
    assert "--accept rewrites tables: give it with --write" in capsys.readouterr().err


def test_a_run_that_cannot_be_rebuilt_here_is_named_not_raised(results):
    shutil.copytree(COMMITTED.parents[1] / "longrag" / "full", results / "longrag" / "full",
                    ignore=shutil.ignore_patterns("*.ipynb"))

    def offline(name):
        raise DatasetNotFound(f"dataset {name!r} is not available here. Set GRAINLAB_MIRROR")

    differences = derived_differences(results, offline, only=["longrag"])
    assert differences == {"longrag/full": ["not rebuilt here: dataset 'nq_open_oracle' is not available here"]}
