"""A study's derived tables (positions, contrasts, verdicts …) rebuilt from its stored runs.

A study module that can rebuild what its notebook derives defines ``derived_tables(folder, load)``
(``{file name: table}`` for ``results/<study>/<profile>/``; ``load`` reads a dataset by name, for a
study whose tables need its data); the main job rebuilds each and compares it
with the committed file (:func:`derived_differences`). :func:`write_superseded` replaces a committed
table only when the rebuilt one proves it superseded: the same rows and the same values in every
committed column, with columns added by newer code. Any other difference is a changed result: it is refused and
named, and rewritten only when a reviewer accepts that table by name (``grainlab tables --write
--accept PREFIX``), never silently.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from pathlib import Path

import pandas as pd

from grainlab.data.types import Dataset
from grainlab.errors import GrainlabError
from grainlab.experiments.stored import table_differences
from grainlab.files import atomic_write_text


def derived_runs(results: Path, only: Iterable[str] = ()) -> list[tuple[Path, Callable[..., dict]]]:
    """``(folder, derived_tables)`` for each ``results/<study>/<profile>/`` with a manifest whose
    study module rebuilds its derived tables (only those starting with one of ``only``)."""
    found = []
    for manifest in sorted(results.glob("*/*/manifest.json")):
        folder = manifest.parent
        name = f"{folder.parent.name}/{folder.name}"
        if only and not any(name.startswith(prefix) for prefix in only):
            continue
        module = f"grainlab.studies.{folder.parent.name}"
        if importlib.util.find_spec(module) is None:
            continue
        rebuild = getattr(importlib.import_module(module), "derived_tables", None)
        if rebuild is not None:
            found.append((folder, rebuild))
    return found


def derived_differences(results: Path, load: Callable[[str], Dataset],
                        only: Iterable[str] = ()) -> dict[str, list[str]]:
    """``{<study>/<profile>/<table>: differences}`` for every derived table (none: it matches); a
    run whose tables cannot be rebuilt here (its data or a stored table missing) is one entry
    ``<study>/<profile>`` saying why."""
    out = {}
    for folder, rebuild in derived_runs(results, only):
        try:
            tables = rebuild(folder, load)
        except GrainlabError as exc:
            out[f"{folder.parent.name}/{folder.name}"] = [f"not rebuilt here: {str(exc).split('. ')[0]}"]
            continue
        for name, table in tables.items():
            out[f"{folder.parent.name}/{folder.name}/{name}"] = table_differences(table, folder / name)
    return out


def only_added_columns(rebuilt: pd.DataFrame, committed: Path) -> bool:
    """Whether ``rebuilt`` equals the committed table on all its rows and columns, adding columns."""
    if not committed.is_file():
        return False
    columns = list(pd.read_csv(committed, nrows=0).columns)
    if not set(columns) < set(rebuilt.columns):
        return False
    return not table_differences(rebuilt[columns], committed)


def write_superseded(results: Path, load: Callable[[str], Dataset], only: Iterable[str] = (),
                     accept: Iterable[str] = ()) -> tuple[list[Path], dict[str, list[str]]]:
    """Write each rebuilt derived table that proves its committed file superseded
    (:func:`only_added_columns`), and each whose values changed under a prefix of ``accept`` (a
    reviewed change: the stored runs are the committed ones, the derivation is the current code,
    and git keeps the old file); returns the files written and the tables refused, with why."""
    accept = tuple(accept)
    written, refused = [], {}
    for folder, rebuild in derived_runs(results, only):
        for name, table in rebuild(folder, load).items():
            path = folder / name
            label = f"{folder.parent.name}/{folder.name}/{name}"
            problems = table_differences(table, path)
            if not problems:
                continue
            if only_added_columns(table, path) or any(label.startswith(prefix) for prefix in accept):
                atomic_write_text(path, table.to_csv(index=False))
                written.append(path)
            else:
                refused[label] = changed_cells(table, path) or problems
    return written, refused


def changed_cells(rebuilt: pd.DataFrame, committed: Path) -> list[str]:
    """The committed columns whose values the rebuilt table changes, with how many rows each
    (empty when the two cannot be compared cell by cell)."""
    columns = [c for c in pd.read_csv(committed, nrows=0).columns if c in rebuilt.columns]
    counts: dict[str, int] = {}
    for problem in table_differences(rebuilt[columns], committed):
        if " row " in problem:
            column = problem.split(" row ", 1)[1].split(" ", 1)[1].split(":", 1)[0]
            counts[column] = counts.get(column, 0) + 1
    return [f"{column} changed in {n} rows" for column, n in counts.items()]


def save_tables(tables: dict[str, pd.DataFrame], folder: Path) -> None:
    """Write ``{file name: table}`` into ``folder`` as CSV (atomically; what :func:`derived_differences` reads)."""
    for name, table in tables.items():
        atomic_write_text(folder / name, table.to_csv(index=False))
