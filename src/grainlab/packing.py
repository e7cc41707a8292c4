"""Results too large to commit travel as xz copies: packed after a run, unpacked before one.

A full run that spans sessions commits each per-system table and its generation archive as they
grow, so a later session on a fresh machine resumes instead of recomputing. Tables over
``COMMIT_LIMIT_BYTES`` (the project's limit on a committed file) get an ``.xz`` copy beside them,
which is committed instead of the table; generation archives (``readers.archive``) always travel
as ``generations.jsonl.xz``, so an archive never crosses the limit as it grows. A packed table is
listed in its folder's ``.gitignore``, so only its copy can be committed. ``unpack_tables`` and
``unpack_archives`` restore them in every notebook's first cell (``notebook_setup``). Nothing
here is trusted: the store checks every restored table against the checksum in its ``.json``
record and recomputes it on a mismatch (``grainlab.experiments.store``); an archived generation is
only reused for a request with exactly its content key.
"""

from __future__ import annotations

import json
import lzma
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grainlab.errors import ConfigError
from grainlab.experiments.store import DamagedTable, stored_table_bytes
from grainlab.files import atomic_write_bytes
from grainlab.readers.archive import ARCHIVE_NAME

COMMIT_LIMIT_BYTES = 1_048_576  # no committed file is larger than this
PACKED_SUFFIX = ".xz"
TABLE_GLOB = "**/per_query/*.csv"
ARCHIVE_GLOB = f"**/{ARCHIVE_NAME}"


class PruneRefused(ConfigError):
    """A manifest cannot prove which tables are superseded, so nothing is deleted."""


STORED_KEY = re.compile(r"(?:^|-)([0-9a-f]{12})\.")  # the content key in "<readable>-<key>.csv", "<key>.<stage>.run"


def packed_path(table: Path) -> Path:
    return table.with_name(table.name + PACKED_SUFFIX)


def _pack(source: Path) -> Path | None:
    """Write ``source``'s ``.xz`` copy unless one at least as new is there; the copy written, or ``None``."""
    packed = packed_path(source)
    if packed.exists() and packed.stat().st_mtime >= source.stat().st_mtime:
        return None
    atomic_write_bytes(packed, lzma.compress(source.read_bytes(), preset=9 | lzma.PRESET_EXTREME))
    return packed


def ignore_unpacked(table: Path) -> None:
    """List ``table`` in its folder's ``.gitignore``: a table that travels as its ``.xz`` copy is
    never committed itself, so ``git add`` of its folder cannot stage a file over the limit."""
    names = _ignored_names(table.parent)
    if table.name not in names:
        _write_ignored_names(table.parent, {*names, table.name})


def _ignored_names(folder: Path) -> list[str]:
    ignore = folder / ".gitignore"
    return ignore.read_text(encoding="utf-8").splitlines() if ignore.exists() else []


def _write_ignored_names(folder: Path, names: set[str]) -> None:
    atomic_write_bytes(folder / ".gitignore", "".join(f"{name}\n" for name in sorted(names)).encode("utf-8"))


def pack_large_tables(results: Path, limit: int = COMMIT_LIMIT_BYTES) -> list[Path]:
    """Write an ``.xz`` copy beside every per-query table under ``results`` larger than ``limit``
    bytes that has none yet (or an older one), and list the table in its folder's ``.gitignore``
    (``ignore_unpacked``); return the copies written."""
    written = []
    for table in sorted(results.glob(TABLE_GLOB)):
        if table.stat().st_size > limit:
            ignore_unpacked(table)
            if (packed := _pack(table)) is not None:
                written.append(packed)
    return written


def _table_key(path: Path) -> str | None:
    """The 12-hex-digit content key in a stored table's or run's file name (the last one there)."""
    keys = STORED_KEY.findall(path.name)
    return keys[-1] if keys else None


FULL_KEY = re.compile(r"^[0-9a-f]{64}$")


@dataclass(frozen=True)
class PrunePlan:
    """What ``grainlab pack-results --prune`` deletes, and every unlisted file it keeps with why."""

    delete: list[Path] = field(default_factory=list)
    kept: list[tuple[Path, str]] = field(default_factory=list)


def _manifest_systems(manifest: Path) -> dict[str, dict[str, Any]]:
    """The ``systems`` of an experiment's manifest, each with a full content key; a manifest that
    cannot prove what it keeps (unreadable, no systems, a system without a key) raises."""
    where = f"{manifest}: "
    todo = "restore it (git checkout) or re-run its experiment; nothing was pruned"
    try:
        data = json.loads(manifest.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise PruneRefused(f"{where}not a readable manifest ({type(exc).__name__}: {exc}); {todo}") from None
    systems = data.get("systems") if isinstance(data, dict) else None
    if not isinstance(systems, dict) or not systems:
        raise PruneRefused(f"{where}lists no systems, so it cannot prove any table superseded; {todo}")
    for label, entry in systems.items():
        if not isinstance(entry, dict) or not FULL_KEY.match(str(entry.get("key", ""))):
            raise PruneRefused(f"{where}system {label!r} has no content key (a manifest of an older format); {todo}")
    return systems


def _replacement_ok(folder: Path, key: str) -> str | None:
    """``None`` when the table stored under ``key`` is in ``folder`` (as itself or its ``.xz``
    copy) and matches the checksum in its record; else why not."""
    try:
        data = stored_table_bytes(folder, key)
    except DamagedTable as exc:
        return f"its replacement is damaged: {exc}"
    return None if data is not None else f"its replacement ({key[:12]}) is not stored here"


def prune_plan(results: Path) -> PrunePlan:
    """Files in a ``per_query`` folder under ``results`` that are proven superseded.

    A file is deleted only when its experiment's manifest records that the system's current
    table replaced it (the system's ``supersedes`` list, written by the engine when it stored the
    new table) and that replacement is there and passes its checksum. Files the manifest does not
    list are otherwise kept, with the reason; modification times are never compared. A manifest
    that cannot prove what it keeps raises :class:`PruneRefused` before anything is deleted."""
    plan = PrunePlan()
    for folder in sorted(results.glob("**/per_query")):
        files = [path for path in sorted(folder.iterdir()) if path.is_file() and _table_key(path) is not None]
        manifest = folder.parent / "manifest.json"
        if not manifest.exists():
            plan.kept.extend((path, "no manifest.json beside its per_query folder") for path in files)
            continue
        systems = _manifest_systems(manifest)
        current = {str(entry["key"])[:12] for entry in systems.values()}
        replaced_by: dict[str, str] = {}
        for entry in systems.values():
            for old in entry.get("supersedes") or []:
                replaced_by.setdefault(str(old)[:12], str(entry["key"]))
        checked: dict[str, str | None] = {}
        for path in files:
            key = _table_key(path)
            if key in current:
                continue
            if key not in replaced_by:
                plan.kept.append((path, "not listed by the manifest, nor recorded as superseded by a system it lists"))
                continue
            new = replaced_by[key]
            if new not in checked:
                checked[new] = _replacement_ok(folder, new)
            if checked[new] is None:
                plan.delete.append(path)
            else:
                plan.kept.append((path, str(checked[new])))
    return plan


def superseded_tables(results: Path) -> list[Path]:
    """The files :func:`prune_plan` would delete."""
    return prune_plan(results).delete


def prune_superseded(results: Path, plan: PrunePlan | None = None) -> list[Path]:
    """Delete the files of ``plan`` (default: :func:`prune_plan`) and their names in their
    folder's ``.gitignore``; return the files deleted. The committed results then hold exactly
    the tables their verdicts were computed from."""
    stale = (plan or prune_plan(results)).delete
    for path in stale:
        path.unlink()
    removed = {path.name for path in stale}
    for folder in sorted({path.parent for path in stale}):
        if (folder / ".gitignore").exists():
            _write_ignored_names(folder, set(_ignored_names(folder)) - removed)
    return stale


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
        ignore_unpacked(table)
        restored.append(table)
    return restored


def pack_archives(results: Path) -> list[Path]:
    """Write ``generations.jsonl.xz`` beside every generation archive under ``results`` whose
    packed copy is missing or older; return the copies written. The packed copy holds every line of
    the archive, so it is what a session commits while a run goes on."""
    return [packed for archive in sorted(results.glob(ARCHIVE_GLOB)) if (packed := _pack(archive)) is not None]


def _archive_key(line: str) -> str | None:
    try:
        entry = json.loads(line)
    except ValueError:
        return None  # a torn line: the archive skips it too
    return entry["key"] if isinstance(entry, dict) and isinstance(entry.get("key"), str) else None


def _whole_lines(text: str) -> list[str]:
    """The complete lines of an archive, each ending in a newline (a torn last line dropped)."""
    # the text after the last newline is empty or torn; not str.splitlines: a generation may hold U+2028
    return [line + "\n" for line in text.split("\n")[:-1]]


def unpack_archives(results: Path) -> list[Path]:
    """Restore every packed generation archive under ``results``: write it where no archive is,
    or add the packed lines whose keys the local archive lacks (made in a session elsewhere);
    return the archives written. A packed copy that does not decompress is skipped (its
    generations are then made again)."""
    restored = []
    for packed in sorted(results.glob(ARCHIVE_GLOB + PACKED_SUFFIX)):
        archive = packed.with_name(packed.name.removesuffix(PACKED_SUFFIX))
        try:
            incoming = _whole_lines(lzma.decompress(packed.read_bytes()).decode("utf-8"))
        except (lzma.LZMAError, UnicodeDecodeError):
            continue
        local = _whole_lines(archive.read_text("utf-8")) if archive.exists() else []
        have = {_archive_key(line) for line in local}
        missing = [line for line in incoming if (key := _archive_key(line)) is not None and key not in have]
        if missing:
            atomic_write_bytes(archive, "".join(local + missing).encode("utf-8"))
            restored.append(archive)
    return restored
