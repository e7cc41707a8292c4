"""A content-keyed, atomically written on-disk cache for expensive artefacts.

A key is the SHA-256 of a canonical JSON of everything the artefact depends on
(dataset hash, chunker spec, model id and revision, code version). A changed input
gives a new key, so a stale entry can never be read; entries are written to a
temporary file and renamed into place, so a crash never leaves half an entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from grainlab import settings

CACHE_FORMAT = 1


def content_key(**parts: Any) -> str:
    """Hex digest of the canonical JSON of ``parts`` (order-independent)."""
    payload = json.dumps({"_format": CACHE_FORMAT, **parts}, sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def hash_texts(items: Iterable[tuple[str, str]]) -> str:
    """Stable digest of ``(id, text)`` pairs, e.g. a corpus or a chunk list."""
    digest = hashlib.sha256()
    for item_id, text in items:
        digest.update(item_id.encode("utf-8"))
        digest.update(b"\x1f")
        digest.update(text.encode("utf-8"))
        digest.update(b"\x1e")
    return digest.hexdigest()


def _atomic_write(path: Path, write: Callable[[Any], None], mode: str = "wb") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file and a rename."""
    _atomic_write(path, lambda handle: handle.write(text), mode="w")


def atomic_write_dir(path: Path, write: Callable[[Path], None]) -> None:
    """Fill a temporary sibling folder with ``write(folder)``, then rename it to ``path``. A failed
    write leaves nothing behind; if another process renamed its copy into place first, theirs stays."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        write(tmp)
        os.replace(tmp, path)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not path.exists():
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


class ArtifactCache:
    """Arrays and JSON documents stored under ``<root>/<kind>/<key[:2]>/<key>``."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else settings.cache_dir()

    def path(self, kind: str, key: str, suffix: str) -> Path:
        return self.root / kind / key[:2] / f"{key}{suffix}"

    def load_array(self, kind: str, key: str) -> np.ndarray | None:
        path = self.path(kind, key, ".npy")
        return np.load(path) if path.exists() else None

    def save_array(self, kind: str, key: str, array: np.ndarray) -> None:
        _atomic_write(self.path(kind, key, ".npy"), lambda handle: np.save(handle, array))

    def array(self, kind: str, key: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """Return the cached array for ``key`` or compute, store and return it."""
        cached = self.load_array(kind, key)
        if cached is not None:
            return cached
        value = np.asarray(compute())
        self.save_array(kind, key, value)
        return value

    def load_json(self, kind: str, key: str) -> Any | None:
        path = self.path(kind, key, ".json")
        return json.loads(path.read_text("utf-8")) if path.exists() else None

    def save_json(self, kind: str, key: str, value: Any) -> None:
        atomic_write_text(self.path(kind, key, ".json"), json.dumps(value))

    def json(self, kind: str, key: str, compute: Callable[[], Any]) -> Any:
        """Return the cached JSON value for ``key`` or compute, store and return it."""
        cached = self.load_json(kind, key)
        if cached is not None:
            return cached
        value = compute()
        self.save_json(kind, key, value)
        return value
