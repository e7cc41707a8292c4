"""Headline numbers of a notebook run, read from the tables it wrote, for comparison with the
committed reference (``tests/notebook_reference.json``, written by ``scripts/notebook_reference.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
SMOKE = json.loads((HERE / "notebook_smoke.json").read_text())
REFERENCE_FILE = HERE / "notebook_reference.json"
def headline_numbers(results: Path, name: str) -> dict[str, float]:
    """``"<table>|<key columns>|<column>" → value`` for every table named in the notebook's smoke spec."""
    spec = SMOKE[name]
    folder = results / name / "quick"
    out: dict[str, float] = {}
    for table in spec["tables"]:
        for path in sorted(folder.glob(table["glob"])):
            if "per_query" in path.parts:
                continue
            frame = pd.read_csv(path)
            keys = table["keys"]
            duplicated = frame.duplicated(keys)
            if duplicated.any():
                raise AssertionError(f"{path}: keys {keys} do not identify a row: {frame[duplicated].head(3)}")
            for _, row in frame.iterrows():
                label = ";".join(f"{k}={row[k]}" for k in keys)
                if any(part in label for part in table.get("exclude", [])):  # timings, not results
                    continue
                for column in table["columns"]:
                    if pd.notna(row[column]):
                        out[f"{path.relative_to(folder).as_posix()}|{label}|{column}"] = float(row[column])
    return out


def compare(found: dict[str, float], expected: dict[str, float], tolerance: float) -> list[str]:
    """Differences beyond ``tolerance`` (absolute), and numbers missing on either side."""
    problems = [f"missing: {key}" for key in sorted(set(expected) - set(found))]
    problems += [f"new, not in the reference: {key}" for key in sorted(set(found) - set(expected))]
    problems += [f"{key}: {found[key]:.4f} vs reference {expected[key]:.4f}" for key in sorted(set(found) & set(expected))
                 if abs(found[key] - expected[key]) > tolerance]
    return problems
