"""Per-system result files keyed by content: written once, found again on a rerun, checked on reading."""

from __future__ import annotations

import io
import json
import lzma
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from grainlab.cache import report_corrupt, sha256_bytes
from grainlab.errors import GrainlabError
from grainlab.files import atomic_write_text

TABLE_COLUMNS = ("qid", "measure", "value")  # every per-query table has at least these


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", text)


def stored_table(folder: Path, key: str, readable: str,
                 compute: Callable[[], tuple[pd.DataFrame, dict[str, Any]]],
                 refresh: bool = False, system: str | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The table and info saved under ``folder`` for ``key``, else ``compute()``'s, saved at once
    (atomically) so a crash later in the run loses nothing already finished.

    The info file records the table's checksum, row count and columns, and its identity (the full
    ``key`` and the ``system`` it belongs to, which ``superseded_keys`` reads); a stored table that
    is truncated, empty, of another shape or fails its checksum is reported and recomputed;
    ``refresh=True`` recomputes it regardless (when something saved beside it is missing)."""
    folder.mkdir(parents=True, exist_ok=True)
    found = sorted(folder.glob(f"*-{key[:12]}.csv"))
    path = found[0] if found else folder / f"{readable}-{key[:12]}.csv"
    info_path = path.with_suffix(".json")
    if path.exists() and not refresh:
        loaded = _load_checked(path, info_path)
        if loaded is not None:
            return loaded
    table, info = compute()
    text = table.to_csv(index=False)
    integrity = {"sha256": sha256_bytes(text.encode("utf-8")), "n_rows": len(table), "columns": list(table.columns)}
    atomic_write_text(path, text)
    identity = {"key": key, "system": system}
    atomic_write_text(info_path, json.dumps({**info, "integrity": integrity, "identity": identity}, indent=1,
                                            default=str))
    return table, info


class DamagedTable(GrainlabError):
    """A stored table does not match the checksum its record holds."""


def stored_table_bytes(folder: Path, key: str) -> bytes | None:
    """The bytes of the table stored in ``folder`` under ``key`` — itself or its ``.xz`` copy —
    read without changing anything; ``None`` when it is not there, :class:`DamagedTable` when it
    does not decompress or fails the checksum in its record."""
    records = sorted(folder.glob(f"*-{key[:12]}.json"))
    if not records:
        return None
    table = records[0].with_suffix(".csv")
    packed = table.with_name(table.name + ".xz")
    try:
        if table.exists():
            data = table.read_bytes()
        elif packed.exists():
            data = lzma.decompress(packed.read_bytes())
        else:
            return None
    except (OSError, lzma.LZMAError) as exc:
        raise DamagedTable(f"{table}: unreadable ({type(exc).__name__})") from None
    try:
        expected = json.loads(records[0].read_text("utf-8"))["integrity"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise DamagedTable(f"{records[0]}: no readable integrity record ({type(exc).__name__})") from None
    if sha256_bytes(data) != expected:
        raise DamagedTable(f"{table}: fails the checksum in {records[0].name} (truncated or edited)")
    return data


def load_stored_table(folder: Path, key: str) -> pd.DataFrame | None:
    """:func:`stored_table_bytes` as a table."""
    data = stored_table_bytes(folder, key)
    return None if data is None else pd.read_csv(io.BytesIO(data), dtype={"qid": str})


def superseded_keys(folder: Path, system: str, key: str) -> list[str]:
    """The full keys of the other tables stored in ``folder`` for ``system`` (by the identity in
    their records): the tables that ``key``'s table replaces. A record without an identity is
    never counted, so only what the store itself wrote can be pruned."""
    keys = []
    for record in sorted(folder.glob("*.json")):
        try:
            identity = json.loads(record.read_text("utf-8")).get("identity") or {}
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(identity, dict) and identity.get("system") == system and identity.get("key") not in (None, key):
            keys.append(str(identity["key"]))
    return keys


def _load_checked(path: Path, info_path: Path) -> tuple[pd.DataFrame, dict[str, Any]] | None:
    try:
        info = json.loads(info_path.read_text("utf-8"))
        data = path.read_bytes()
        expected = info.pop("integrity")
        info.pop("identity", None)
    except (OSError, ValueError, KeyError, AttributeError) as exc:
        return _reject(path, info_path, f"no readable integrity record ({type(exc).__name__})")
    if sha256_bytes(data) != expected.get("sha256"):
        return _reject(path, info_path, "checksum mismatch (truncated or edited)")
    table = pd.read_csv(io.BytesIO(data), dtype={"qid": str})
    if len(table) != expected.get("n_rows") or list(table.columns) != expected.get("columns") \
            or not set(TABLE_COLUMNS) <= set(table.columns):
        return _reject(path, info_path, f"shape {table.shape} is not the recorded {expected.get('n_rows')} rows")
    return table, {**info, "reused": True}


def _reject(path: Path, info_path: Path, reason: str) -> None:
    report_corrupt(path, reason)
    path.unlink(missing_ok=True)
    info_path.unlink(missing_ok=True)
    return None
