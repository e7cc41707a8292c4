"""``grainlab pack-results --prune`` deletes only what a manifest proves superseded.

A file is proven superseded when its experiment's manifest records that a system's current
table replaced it and that table is there and passes its checksum. Everything else is kept
and named; a manifest that proves nothing refuses the prune before any file is deleted, and
modification times never decide."""

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from grainlab.cli import main
from grainlab.data import load_dataset
from grainlab.experiments import System, run_experiment
from grainlab.experiments.store import stored_table
from grainlab.packing import PruneRefused, prune_plan, prune_superseded, superseded_tables

OLD, NEW, OTHER = "a" * 64, "b" * 64, "c" * 64


def _store(folder: Path, key: str, system: str = "bm25|none|max", value: float = 0.5) -> None:
    table = pd.DataFrame({"qid": ["1", "2"], "measure": "nDCG@10", "value": [value, value]})
    stored_table(folder, key, "bm25__none", lambda: (table, {}), system=system)
    (folder / f"{key[:12]}.final.run").write_text("1 Q0 d 1 1.0 t\n")


def _experiment(tmp_path: Path, n_tables: int = 9) -> Path:
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    for i in range(n_tables):
        _store(folder, f"{i:x}" * 64, system=f"s{i}")
    return folder


def _write_manifest(folder: Path, manifest: object) -> Path:
    path = folder.parent / "manifest.json"
    path.write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    return path


@pytest.mark.parametrize("manifest", [{}, {"systems": {}}, {"systems": {"s0": {"name": "s0"}}},
                                      {"systems": {"s0": {"key": "0" * 12}}}, [], "{\"systems\": {\"s0\": {\"ke"])
def test_a_manifest_that_proves_nothing_refuses_and_deletes_nothing(tmp_path, manifest):
    folder = _experiment(tmp_path)
    before = sorted(folder.iterdir())
    _write_manifest(folder, manifest)
    with pytest.raises(PruneRefused, match="nothing was pruned"):
        prune_superseded(tmp_path)
    assert sorted(folder.iterdir()) == before


def test_a_truncated_manifest_is_one_line_on_the_command_line(tmp_path, monkeypatch, capsys):
    folder = _experiment(tmp_path, n_tables=2)
    _write_manifest(folder, '{"systems": {"s0": {"key": "00')
    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path))
    assert main(["pack-results", "--prune"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "manifest.json: not a readable manifest" in err
    assert "Traceback" not in err and len(list(folder.glob("*.csv"))) == 2


def test_an_unlisted_table_is_kept_whatever_its_modification_time(tmp_path):
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    _store(folder, NEW)
    _store(folder, OTHER)  # unlisted, not recorded as superseded: e.g. a run still going on
    manifest = _write_manifest(folder, {"systems": {"s": {"key": NEW}}})
    stamp = manifest.stat().st_mtime
    for path in folder.iterdir():  # the same second as the manifest, as after a zip or FAT copy
        os.utime(path, (stamp, stamp))
    plan = prune_plan(tmp_path)
    assert plan.delete == []
    assert {path.name for path, _ in plan.kept} == {p.name for p in folder.iterdir() if OTHER[:12] in p.name}
    assert all("not listed" in why for _, why in plan.kept)


def test_a_table_the_manifest_records_as_replaced_goes_with_its_runs_copy_and_ignore_line(tmp_path):
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    _store(folder, OLD)
    _store(folder, NEW)
    old_files = sorted(p.name for p in folder.iterdir() if OLD[:12] in p.name)
    (folder / f"bm25__none-{OLD[:12]}.csv.xz").write_bytes(b"packed")
    (folder / ".gitignore").write_text(f"bm25__none-{OLD[:12]}.csv\nbm25__none-{NEW[:12]}.csv\n")
    _write_manifest(folder, {"systems": {"s": {"key": NEW, "supersedes": [OLD]}}})
    expected = sorted([*old_files, f"bm25__none-{OLD[:12]}.csv.xz"])
    assert sorted(p.name for p in superseded_tables(tmp_path)) == expected
    assert sorted(p.name for p in prune_superseded(tmp_path)) == expected
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [".gitignore", f"bm25__none-{NEW[:12]}.csv", f"bm25__none-{NEW[:12]}.json", f"{NEW[:12]}.final.run"])
    assert (folder / ".gitignore").read_text() == f"bm25__none-{NEW[:12]}.csv\n"


@pytest.mark.parametrize("damage", ["missing", "edited", "packed-only-damaged"])
def test_a_table_is_kept_while_its_replacement_is_missing_or_fails_its_checksum(tmp_path, damage):
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    _store(folder, OLD)
    _store(folder, NEW)
    replacement = folder / f"bm25__none-{NEW[:12]}.csv"
    if damage == "missing":
        replacement.unlink()
        (folder / f"bm25__none-{NEW[:12]}.json").unlink()
    elif damage == "edited":
        replacement.write_text(replacement.read_text().replace("0.5", "0.6"))
    else:
        replacement.unlink()
        (folder / f"bm25__none-{NEW[:12]}.csv.xz").write_bytes(b"not xz")
    _write_manifest(folder, {"systems": {"s": {"key": NEW, "supersedes": [OLD]}}})
    plan = prune_plan(tmp_path)
    assert plan.delete == []
    assert all("replacement" in why for _, why in plan.kept) and len(plan.kept) == 3


def test_a_replacement_packed_as_xz_counts_when_it_checks_out(tmp_path):
    from grainlab.packing import pack_large_tables

    folder = tmp_path / "study" / "full" / "set" / "per_query"
    _store(folder, OLD)
    _store(folder, NEW)
    pack_large_tables(tmp_path, limit=0)
    (folder / f"bm25__none-{NEW[:12]}.csv").unlink()  # a fresh clone holds only the .xz copy
    _write_manifest(folder, {"systems": {"s": {"key": NEW, "supersedes": [OLD]}}})
    assert {p.name for p in prune_plan(tmp_path).delete} >= {f"bm25__none-{OLD[:12]}.csv"}


def test_a_folder_without_a_manifest_is_left_alone_and_named(tmp_path):
    folder = tmp_path / "other" / "per_query"
    _store(folder, OLD)
    plan = prune_plan(tmp_path)
    assert plan.delete == [] and {why for _, why in plan.kept} == {"no manifest.json beside its per_query folder"}


def test_dry_run_prints_what_would_go_and_deletes_nothing(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    _store(folder, OLD)
    _store(folder, NEW)
    _write_manifest(folder, {"systems": {"s": {"key": NEW, "supersedes": [OLD]}}})
    before = sorted(folder.iterdir())
    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path))
    assert main(["pack-results", "--prune", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert out.count("would remove") == 3 and "dry run: 3 file(s) would be removed" in out
    assert sorted(folder.iterdir()) == before
    assert main(["pack-results", "--dry-run"]) == 2  # a dry run of nothing is a mistake, said so


def test_the_engine_records_what_a_new_key_replaces_and_a_run_in_progress_keeps_its_tables(
        toy_mirror, tmp_path, cache):
    data = load_dataset("scifact", mirror=toy_mirror, allow_download=False)
    systems = [System("bm25", "none", "max"), System("bm25", "fixed_tokens(size=8,overlap=0)", "max")]
    results = tmp_path / "results"
    first = run_experiment(data, systems, name="toy", results_dir=results, cache=cache, depth=10,
                           n_resamples=50, progress=False)
    folder = results / "toy" / "per_query"
    assert all(entry["supersedes"] == [] for entry in first.manifest["systems"].values())
    assert prune_plan(results).delete == [] and prune_plan(results).kept == []
    second = run_experiment(data, systems, name="toy", results_dir=results, cache=cache, depth=20,
                            n_resamples=50, progress=False)  # the depth is in the key: both recomputed
    for system in systems:
        assert second.manifest["systems"][system.name]["supersedes"] == [first.manifest["systems"][system.name]["key"]]
    old = {first.manifest["systems"][s.name]["key"][:12] for s in systems}
    assert {p.name.split("-")[-1].split(".")[0] for p in prune_plan(results).delete} == old
    # a later run, stopped before it wrote its manifest, stored a table under a third key
    in_progress = run_experiment(data, systems[:1], name="toy-progress", results_dir=results, cache=cache, depth=30,
                                 n_resamples=50, progress=False)
    stray = next((results / "toy-progress" / "per_query").glob("*.csv"))
    for path in (results / "toy-progress" / "per_query").iterdir():
        path.rename(folder / path.name)
    pruned = {p.name for p in prune_superseded(results)}
    assert stray.name not in pruned and (folder / stray.name).exists()
    assert in_progress.manifest["systems"][systems[0].name]["key"][:12] in stray.name
    assert {p.name for p in folder.glob("*.csv")} == {stray.name} | {
        next(folder.glob(f"*-{second.manifest['systems'][s.name]['key'][:12]}.csv")).name for s in systems}
