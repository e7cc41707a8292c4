"""An experiment's tables read back from what it stored, with nothing recomputed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.errors import GrainlabError
from grainlab.experiments.store import load_stored_table

KEYS = ["dataset", "system", "retriever", "chunker", "aggregate", "stage"]


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
