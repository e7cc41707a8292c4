"""Per-system result files keyed by content: written once, found again on a rerun."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.cache import atomic_write_text


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)


def stored_table(folder: Path, key: str, readable: str,
                 compute: Callable[[], tuple[pd.DataFrame, dict[str, Any]]]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The table and info saved under ``folder`` for ``key``, else ``compute()``'s, saved at once
    (atomically) so a crash later in the run loses nothing already finished."""
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(f"*-{key[:12]}.csv"))
    path = found[0] if found else folder / f"{readable}-{key[:12]}.csv"
    info_path = path.with_suffix(".json")
    if path.exists() and info_path.exists():
        return pd.read_csv(path, dtype={"qid": str}), {**json.loads(info_path.read_text()), "reused": True}
    table, info = compute()
    atomic_write_text(path, table.to_csv(index=False))
    atomic_write_text(info_path, json.dumps(info, indent=1, default=str))
    return table, info
