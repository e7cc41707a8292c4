"""Per-query tables over the commit limit travel packed and come back exactly, or are recomputed."""

from pathlib import Path

import numpy as np
import pandas as pd

from grainlab.experiments.store import stored_table
from grainlab.transport import pack_large_tables, packed_path, unpack_tables

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
