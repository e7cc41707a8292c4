"""Per-query tables over the commit limit and generation archives travel packed and come back
exactly, or are recomputed; no committed file is over the limit."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from grainlab.experiments.store import stored_table
from grainlab.packing import (
    COMMIT_LIMIT_BYTES,
    pack_archives,
    pack_large_tables,
    packed_path,
    unpack_archives,
    unpack_tables,
)
from grainlab.readers.archive import GenerationArchive

KEY = "0123456789abcdef" * 4


def _table(n: int = 2_000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"qid": [f"q{i}" for i in range(n)], "measure": "nDCG@10", "value": rng.random(n)})


def _store(folder: Path, table: pd.DataFrame, calls: list[int]) -> tuple[pd.DataFrame, dict]:
    def compute():
        calls.append(1)
        return table, {"system": "toy"}
    return stored_table(folder, KEY, "toy", compute)


def _stored_and_packed(folder: Path, calls: list[int]) -> tuple[Path, Path]:
    """Store the toy table under ``folder`` and pack it (limit 0); its table and packed copy."""
    _store(folder, _table(), calls)
    (csv,) = folder.glob("*.csv")
    (packed,) = pack_large_tables(folder.parent, limit=0)
    return csv, packed


def test_a_packed_table_is_restored_and_reused_without_recomputing(tmp_path):
    folder = tmp_path / "study" / "full" / "set" / "per_query"
    calls: list[int] = []
    table, _ = _store(folder, _table(), calls)
    (csv,) = folder.glob("*.csv")
    size = csv.stat().st_size
    assert pack_large_tables(tmp_path, limit=size + 1) == []  # under the limit: committed as it is
    (packed,) = pack_large_tables(tmp_path, limit=size - 1)
    assert packed == packed_path(csv) and packed.stat().st_size < size
    assert pack_large_tables(tmp_path, limit=size - 1) == []  # already packed and current
    csv.unlink()  # a fresh clone: the table itself was never committed
    assert unpack_tables(tmp_path) == [csv]
    again, info = _store(folder, _table(), calls)
    assert calls == [1] and info["reused"] is True
    pd.testing.assert_frame_equal(again, table)


def test_a_packed_table_is_git_ignored_in_its_folder_so_only_its_copy_can_be_committed(tmp_path):
    import subprocess

    folder = tmp_path / "study" / "per_query"
    calls: list[int] = []
    _store(folder, _table(), calls)
    (csv,) = folder.glob("*.csv")
    small = folder / "small.csv"
    small.write_text("qid,value\n")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    assert pack_large_tables(tmp_path, limit=small.stat().st_size)  # the stored table is over, small.csv is not
    assert (folder / ".gitignore").read_text().splitlines() == [csv.name]
    ignored = subprocess.run(["git", "-C", str(tmp_path), "check-ignore", str(csv), str(small), str(packed_path(csv))],
                             capture_output=True, text=True).stdout.split()
    assert ignored == [str(csv)]  # the table is ignored; its .xz copy and the small table are not
    pack_large_tables(tmp_path, limit=small.stat().st_size)
    csv.unlink()
    unpack_tables(tmp_path)
    assert (folder / ".gitignore").read_text().splitlines() == [csv.name]  # listed once


def test_a_damaged_packed_table_is_recomputed(tmp_path):
    folder = tmp_path / "per_query"
    calls: list[int] = []
    csv, packed = _stored_and_packed(folder, calls)
    csv.unlink()
    packed.write_bytes(packed.read_bytes()[:100])  # truncated in transit: does not decompress
    assert unpack_tables(tmp_path) == []
    _store(folder, _table(), calls)
    assert calls == [1, 1]


def test_a_packed_table_of_other_content_fails_its_checksum_and_is_recomputed(tmp_path):
    folder = tmp_path / "per_query"
    calls: list[int] = []
    csv, packed = _stored_and_packed(folder, calls)
    csv.write_text(_table(10).to_csv(index=False))  # not what the integrity record describes
    packed.unlink()
    (packed,) = pack_large_tables(tmp_path, limit=0)
    csv.unlink()
    assert unpack_tables(tmp_path) == [csv]
    table, info = _store(folder, _table(), calls)
    assert calls == [1, 1] and "reused" not in info and len(table) == 2_000


def test_without_its_integrity_record_a_packed_table_is_left_packed(tmp_path):
    csv, _ = _stored_and_packed(tmp_path / "per_query", [])
    csv.unlink()
    csv.with_suffix(".json").unlink()
    assert unpack_tables(tmp_path) == [] and not csv.exists()


def test_a_notebook_opened_directly_restores_its_packed_tables(tmp_path, monkeypatch):
    from grainlab.reproduce import notebook_setup

    monkeypatch.setenv("GRAINLAB_RESULTS", str(tmp_path / "results"))
    monkeypatch.setenv("GRAINLAB_FIGURES", str(tmp_path / "figures"))
    csv, _ = _stored_and_packed(tmp_path / "results" / "chunk_size" / "full" / "set" / "per_query", [])
    csv.unlink()
    notebook_setup("chunk_size", "full")  # the notebook's first cell, as JupyterLab runs it
    assert csv.exists()


def _archive(path: Path, keys: range) -> GenerationArchive:
    archive = GenerationArchive(path)
    for i in keys:
        archive.append(f"k{i}", {"text": f"answer {i}", "new_tokens": i})
    return archive


def test_an_archive_travels_packed_and_comes_back_line_for_line(tmp_path):
    path = tmp_path / "study" / "full" / "generations.jsonl"
    _archive(path, range(50))
    original = path.read_bytes()
    (packed,) = pack_archives(tmp_path)
    assert packed == packed_path(path) and packed.stat().st_size < len(original)
    assert pack_archives(tmp_path) == []  # current
    path.unlink()  # a fresh clone: only the packed copy is committed
    assert unpack_archives(tmp_path) == [path]
    assert path.read_bytes() == original and len(GenerationArchive(path)) == 50
    assert unpack_archives(tmp_path) == []  # nothing missing: left alone


def test_a_packed_archive_adds_only_the_generations_the_local_one_lacks(tmp_path):
    path = tmp_path / "generations.jsonl"
    _archive(path, range(10))
    pack_archives(tmp_path)
    path.unlink()
    _archive(path, range(5, 12))  # this machine made 5..11; the packed copy (another session) 0..9
    with path.open("a", encoding="utf-8") as handle:
        handle.write('{"key": "torn", "te')  # a run killed mid-write
    assert unpack_archives(tmp_path) == [path]
    keys = [json.loads(line)["key"] for line in path.read_text("utf-8").split("\n") if line]
    assert sorted(keys) == sorted(f"k{i}" for i in range(12)) and len(keys) == 12  # each once, torn line gone
    assert GenerationArchive(path).get("k0")["new_tokens"] == 0


def test_a_generation_holding_a_line_separator_is_one_line(tmp_path):
    path = tmp_path / "generations.jsonl"
    line = json.dumps({"key": "k", "text": "a\u2028b"}, ensure_ascii=False) + "\n"  # U+2028 raw, as the archive writes it
    path.write_text(line, encoding="utf-8")
    pack_archives(tmp_path)
    path.write_text("", encoding="utf-8")
    assert unpack_archives(tmp_path) == [path] and path.read_text("utf-8") == line


def test_a_damaged_packed_archive_is_skipped(tmp_path):
    path = tmp_path / "generations.jsonl"
    _archive(path, range(3))
    (packed,) = pack_archives(tmp_path)
    packed.write_bytes(packed.read_bytes()[:40])
    path.unlink()
    assert unpack_archives(tmp_path) == [] and not path.exists()


def test_notebook_setup_restores_the_packed_archive(tmp_path, monkeypatch):
    from grainlab import settings
    from grainlab.reproduce import notebook_setup

    monkeypatch.setenv(settings.RESULTS_ENV, str(tmp_path / "results"))
    monkeypatch.setenv(settings.FIGURES_ENV, str(tmp_path / "figures"))
    path = tmp_path / "results" / "dense_x" / "full" / "generations.jsonl"
    _archive(path, range(4))
    pack_archives(tmp_path / "results")
    path.unlink()
    setup = notebook_setup("dense_x", "full")
    assert len(GenerationArchive(setup.results / "generations.jsonl")) == 4


def test_no_committed_file_is_over_the_commit_limit():
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False)
    if listed.returncode != 0:
        pytest.skip("not a git checkout")
    over = [(name, (root / name).stat().st_size) for name in listed.stdout.decode().split("\0")
            if name and (root / name).is_file() and (root / name).stat().st_size > COMMIT_LIMIT_BYTES]
    assert over == [], f"commit these packed (grainlab pack-results, or write .xz): {over}"
