"""An experiment's tables read back from what it stored, with nothing recomputed."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from grainlab.errors import GrainlabError
from grainlab.experiments.store import load_stored_table

KEYS = ["dataset", "system", "retriever", "chunker", "aggregate", "stage"]
UNIT_COLUMNS = ["n_units", "mean_unit_tokens"]


class MissingResults(GrainlabError):
    """A stored experiment or one of its per-system tables is not there."""


def experiment_manifest(folder: Path) -> dict[str, Any]:
    """The ``manifest.json`` ``run_experiment`` wrote in ``folder``."""
    path = Path(folder) / "manifest.json"
    try:
        manifest = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise MissingResults(f"{path} not found: run the notebook that writes {Path(folder).name}, "
                             f"or check out the committed results") from None
    except ValueError as exc:
        raise MissingResults(f"{path} is not valid JSON ({exc}): restore it with git checkout") from None
    if not isinstance(manifest.get("systems"), dict):
        raise MissingResults(f"{path} lists no systems: it was not written by run_experiment")
    return manifest


def stored_per_query(folder: Path) -> pd.DataFrame:
    """The experiment's per-query table as ``run_experiment`` returned it (one row per query ×
    system × measure), assembled from the per-system tables its manifest names, each checked
    against its recorded checksum (a table committed as its ``.xz`` copy is read from that)."""
    folder = Path(folder)
    manifest = experiment_manifest(folder)
    dataset = manifest.get("parameters", {}).get("dataset", folder.name)
    frames, tags = [], []
    for display, entry in manifest["systems"].items():
        table = load_stored_table(folder / "per_query", entry["key"])
        if table is None:
            raise MissingResults(f"{folder}/per_query: no stored table for {display!r} (key {entry['key'][:12]}): "
                                 f"re-run the notebook that writes it")
        entry_tags = dict(entry.get("tags") or {})
        tags += [t for t in entry_tags if t not in tags]
        frames.append(table.assign(dataset=dataset, system=display, **entry_tags))
    per_query = pd.concat(frames, ignore_index=True)
    for column in KEYS:
        if column not in per_query:
            per_query[column] = None
    return per_query[[*KEYS, *tags, "qid", "measure", "value"]]


def aggregate_table(per_query: pd.DataFrame, units: pd.DataFrame, tags: list[str]) -> pd.DataFrame:
    """Each system's mean and count per stage and measure over ``per_query`` (its ``KEYS`` and
    ``tags`` columns kept), with the unit counts of ``units`` (``system``, ``n_units``,
    ``mean_unit_tokens``): the experiment's ``aggregate.csv``."""
    return (per_query.groupby(KEYS + tags + ["measure"], sort=False, dropna=False)["value"]
            .agg(["mean", "count"]).reset_index()
            .merge(units[["system", *UNIT_COLUMNS]], on="system", how="left"))


def stored_aggregate(folder: Path) -> pd.DataFrame:
    """The experiment's ``aggregate.csv`` rebuilt from its stored per-query tables and the unit
    counts its manifest records, by the engine's own :func:`aggregate_table`."""
    manifest = experiment_manifest(folder)
    per_query = stored_per_query(folder)
    tags = [c for c in per_query.columns if c not in (*KEYS, "qid", "measure", "value")]
    units = pd.DataFrame([{"system": display, **{c: entry.get(c) for c in UNIT_COLUMNS}}
                          for display, entry in manifest["systems"].items()])
    return aggregate_table(per_query, units, tags)


def aggregate_differences(folder: Path, tolerance: float = 1e-9) -> list[str]:
    """How the committed ``aggregate.csv`` of an experiment differs from the one its stored
    per-query tables give (:func:`stored_aggregate`): missing or extra rows, counts, means."""
    folder = Path(folder)
    committed = pd.read_csv(folder / "aggregate.csv")
    rebuilt = stored_aggregate(folder)
    on = ["system", "stage", "measure"]
    merged = committed[on + ["mean", "count"]].astype({c: str for c in on}).merge(
        rebuilt[on + ["mean", "count"]].astype({c: str for c in on}), on=on, how="outer",
        suffixes=("_committed", "_rebuilt"), indicator="side")
    problems = [f"{row.system} · {row.stage} · {row.measure}: only in the "
                f"{'committed table' if row.side == 'left_only' else 'per-query tables'}"
                for row in merged[merged["side"] != "both"].itertuples()]
    both = merged[merged["side"] == "both"]
    wrong = both[(both["count_committed"] != both["count_rebuilt"])
                 | ((both["mean_committed"] - both["mean_rebuilt"]).abs() > tolerance)]
    problems += [f"{row.system} · {row.stage} · {row.measure}: committed mean {row.mean_committed:.6g} "
                 f"(n={int(row.count_committed)}), per-query tables give {row.mean_rebuilt:.6g} (n={int(row.count_rebuilt)})"
                 for row in wrong.itertuples()]
    return problems


def table_differences(rebuilt: pd.DataFrame, committed: Path, tolerance: float = 1e-9) -> list[str]:
    """How a committed CSV differs from the table that rebuilds it: columns, row count, and each
    cell (numbers within ``tolerance``, relative or absolute; text exactly; missing equals missing).
    ``rebuilt`` is read back through CSV first, so both sides have the types the file gives."""
    if not committed.is_file():
        return [f"{committed.name}: not committed"]
    ours = pd.read_csv(io.StringIO(rebuilt.to_csv(index=False)))
    theirs = pd.read_csv(committed)
    if list(ours.columns) != list(theirs.columns):
        added = [c for c in ours.columns if c not in theirs.columns]
        missing = [c for c in theirs.columns if c not in ours.columns]
        return [f"{committed.name}: columns " + ("; ".join(
            ([f"added {', '.join(added)}"] if added else []) + ([f"missing {', '.join(missing)}"] if missing else []))
            or "in another order")]
    if len(ours) != len(theirs):
        return [f"{committed.name}: {len(theirs)} rows committed, {len(ours)} rebuilt"]
    problems = []
    for column in ours.columns:
        a, b = theirs[column], ours[column]
        if pd.api.types.is_numeric_dtype(a) and pd.api.types.is_numeric_dtype(b):
            x, y = a.astype(float).to_numpy(), b.astype(float).to_numpy()
            same = np.isclose(x, y, rtol=tolerance, atol=tolerance) | (np.isnan(x) & np.isnan(y))
        else:
            same = (a.isna() & b.isna()) | (a.astype(str) == b.astype(str))
        for row in np.flatnonzero(~np.asarray(same)):
            problems.append(f"{committed.name}: row {row} {column}: committed {_shown(a.iloc[row])}, "
                            f"rebuilt {_shown(b.iloc[row])}")
    return problems


def _shown(value: Any) -> str:
    """A cell as a person reads it: numbers as Python prints them, text quoted."""
    return repr(value.item() if isinstance(value, np.generic) else value)


def stored_systems(folder: Path) -> pd.DataFrame:
    """The experiment's systems as its manifest records them: one row per system (``system``,
    its tags, ``n_units``, ``mean_unit_tokens``), the shape of ``ExperimentResult.systems``' label
    and tag columns."""
    manifest = experiment_manifest(folder)
    return pd.DataFrame([{"system": display, **(entry.get("tags") or {}), **{c: entry.get(c) for c in UNIT_COLUMNS}}
                         for display, entry in manifest["systems"].items()])
