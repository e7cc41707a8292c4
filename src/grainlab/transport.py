"""Per-query tables too large to commit travel as xz copies: packed after a run, unpacked before one.

A full run that spans sessions commits each per-system table as it finishes, so a later session on
a fresh machine resumes instead of recomputing. Tables over ``COMMIT_LIMIT_BYTES`` (the project's
limit on a committed file) get an ``.xz`` copy beside them, which is committed instead of the
table; ``unpack_tables`` restores the table in every notebook's first cell (``notebook_setup``). Nothing here is trusted: the store checks
every restored table against the checksum in its ``.json`` record and recomputes it on a mismatch
(``grainlab.experiments.store``).
"""

from __future__ import annotations

import lzma
from pathlib import Path

from grainlab.cache import atomic_write_bytes

COMMIT_LIMIT_BYTES = 1_048_576  # no committed file is larger than this
PACKED_SUFFIX = ".xz"
TABLE_GLOB = "**/per_query/*.csv"


def packed_path(table: Path) -> Path:
    return table.with_name(table.name + PACKED_SUFFIX)


def pack_large_tables(results: Path, limit: int = COMMIT_LIMIT_BYTES) -> list[Path]:
    """Write an ``.xz`` copy beside every per-query table under ``results`` larger than ``limit``
    bytes that has none yet (or an older one); return the copies written."""
    written = []
    for table in sorted(results.glob(TABLE_GLOB)):
        if table.stat().st_size <= limit:
            continue
        packed = packed_path(table)
        if packed.exists() and packed.stat().st_mtime >= table.stat().st_mtime:
            continue
        atomic_write_bytes(packed, lzma.compress(table.read_bytes(), preset=9 | lzma.PRESET_EXTREME))
        written.append(packed)
    return written


def unpack_tables(results: Path) -> list[Path]:
    """Restore every packed per-query table under ``results`` whose table is missing and whose
    integrity record (``.json``) is present; return the tables restored. A packed copy that does
    not decompress is skipped (the run then recomputes that table)."""
    restored = []
    for packed in sorted(results.glob(TABLE_GLOB + PACKED_SUFFIX)):
        table = packed.with_name(packed.name.removesuffix(PACKED_SUFFIX))
        if table.exists() or not table.with_suffix(".json").exists():
            continue
        try:
            data = lzma.decompress(packed.read_bytes())
        except lzma.LZMAError:
            continue
        atomic_write_bytes(table, data)
        restored.append(table)
    return restored
