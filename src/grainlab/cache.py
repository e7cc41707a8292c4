"""A content-keyed, atomically written, checksummed on-disk cache for expensive artefacts.

A key is the SHA-256 of a canonical JSON of everything the artefact depends on
(dataset hash, chunker spec, model id and revision, and a fingerprint of the source code
that computes it: :func:`code_fingerprint`). A changed input gives a new key, so a stale
entry can never be read; entries are written to a temporary file and renamed into place,
so a crash never leaves half an entry. Each entry has a sidecar ``.sha256`` file holding
the checksum (and shape) of its bytes: an entry that is truncated, empty, of the wrong
shape or fails its checksum is reported once (:class:`CorruptCacheWarning`), deleted and
recomputed — never reused. A cache miss costs time only; the stored per-query results that a
study commits are keyed differently, by explicit component versions (``experiments.identity``),
so editing source never orphans them.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import os
import shutil
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from grainlab import settings
from grainlab.files import atomic_write_bytes, atomic_write_text

CACHE_FORMAT = 2
PACKAGE_ROOT = Path(__file__).resolve().parent
CHECKSUM_SUFFIX = ".sha256"


class CorruptCacheWarning(UserWarning):
    """A cache entry or stored result failed its integrity check and is being recomputed."""


def report_corrupt(path: Path, reason: str) -> None:
    """Say (once per entry: the entry is deleted afterwards) that ``path`` is being recomputed."""
    warnings.warn(f"grainlab: cache entry {path} is unusable ({reason}); recomputing it", CorruptCacheWarning,
                  stacklevel=3)


@functools.cache
def code_fingerprint(*modules: str) -> str:
    """SHA-256 of the source files of grainlab modules or packages named relative to the
    package (``"retrieval.bm25"``, ``"evaluation"``): the "code version" part of a key, so
    any edit to the code that computes a value gives it a new key."""
    digest = hashlib.sha256()
    for module in sorted(set(modules)):
        base = PACKAGE_ROOT.joinpath(*module.split("."))
        files = sorted(base.rglob("*.py")) if base.is_dir() else [base.with_suffix(".py")]
        if not files or not files[0].exists():
            raise ValueError(f"code_fingerprint: no grainlab module {module!r} ({base})")
        for path in files:
            digest.update(path.relative_to(PACKAGE_ROOT).as_posix().encode())
            digest.update(b"\x1f")
            digest.update(path.read_bytes())
            digest.update(b"\x1e")
    return digest.hexdigest()[:16]


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """SHA-256 of a file, read in 16 MB blocks (model files and indexes are gigabytes)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 24), b""):
            digest.update(block)
    return digest.hexdigest()


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


def write_checksummed(path: Path, data: bytes, **meta: Any) -> None:
    """Write ``data`` and then its sidecar checksum (with ``meta``, e.g. a shape), both atomically;
    a crash between the two leaves an entry without a checksum, which reads as a miss."""
    atomic_write_bytes(path, data)
    sidecar = {"sha256": sha256_bytes(data), "bytes": len(data), **meta}
    atomic_write_text(path.with_name(path.name + CHECKSUM_SUFFIX), json.dumps(sidecar))


def read_checksummed(path: Path) -> tuple[bytes, dict[str, Any]] | None:
    """The bytes of an entry written by :func:`write_checksummed` and its sidecar, or ``None`` when
    there is no entry; an entry without a valid sidecar or whose bytes fail the checksum is
    reported, deleted and read as ``None``."""
    if not path.exists():
        return None
    sidecar = path.with_name(path.name + CHECKSUM_SUFFIX)
    try:
        meta = json.loads(sidecar.read_text("utf-8"))
        data = path.read_bytes()
    except (OSError, ValueError) as exc:
        return reject_entry(path, f"no readable checksum ({type(exc).__name__})")
    if not isinstance(meta, dict) or meta.get("sha256") != sha256_bytes(data):
        return reject_entry(path, f"checksum mismatch ({len(data)} bytes, expected {meta.get('bytes')})"
                        if isinstance(meta, dict) else "malformed checksum file")
    return data, meta


def reject_entry(path: Path, reason: str) -> None:
    """Report an unusable entry, delete it and its checksum; returns ``None`` (read it as a miss)."""
    report_corrupt(path, reason)
    discard_entry(path)
    return None


def discard_entry(path: Path) -> None:
    """Remove an entry and its checksum sidecar."""
    path.unlink(missing_ok=True)
    path.with_name(path.name + CHECKSUM_SUFFIX).unlink(missing_ok=True)


DIR_CHECKSUMS = ".checksums.json"


def write_dir_checksums(folder: Path) -> None:
    """Record the SHA-256 of every file in ``folder`` (call it inside :func:`atomic_write_dir`)."""
    folder = Path(folder)
    sums = {p.relative_to(folder).as_posix(): sha256_bytes(p.read_bytes())
            for p in sorted(folder.rglob("*")) if p.is_file() and p.name != DIR_CHECKSUMS}
    (folder / DIR_CHECKSUMS).write_text(json.dumps(sums))


def verify_dir_checksums(folder: Path) -> bool:
    """Whether every file recorded by :func:`write_dir_checksums` is present and intact; a folder
    that fails is reported (and should then be discarded with :func:`discard_dir`)."""
    folder = Path(folder)
    try:
        sums = json.loads((folder / DIR_CHECKSUMS).read_text("utf-8"))
        bad = [name for name, digest in sums.items() if sha256_bytes((folder / name).read_bytes()) != digest]
    except (OSError, ValueError, AttributeError) as exc:
        report_corrupt(folder, f"no readable checksums ({type(exc).__name__})")
        return False
    if bad or not sums:
        report_corrupt(folder, f"checksum mismatch in {bad or 'an empty folder'}")
        return False
    return True


def discard_dir(folder: Path) -> None:
    """Remove a cached folder (a no-op when absent)."""
    shutil.rmtree(folder, ignore_errors=True)


class ArtifactCache:
    """Arrays and JSON documents stored under ``<root>/<kind>/<key[:2]>/<key>``."""

    def __init__(self, root: str | os.PathLike | None = None) -> None:
        self.root = Path(root) if root is not None else settings.cache_dir()

    def path(self, kind: str, key: str, suffix: str) -> Path:
        return self.root / kind / key[:2] / f"{key}{suffix}"

    def load_array(self, kind: str, key: str) -> np.ndarray | None:
        """The stored array, or ``None`` when absent or unusable (reported, deleted)."""
        path = self.path(kind, key, ".npy")
        found = read_checksummed(path)
        if found is None:
            return None
        data, meta = found
        try:
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except (ValueError, OSError, EOFError) as exc:
            return reject_entry(path, f"not a numpy array ({exc})")
        if list(array.shape) != meta.get("shape") or str(array.dtype) != meta.get("dtype"):
            return reject_entry(path, f"shape {array.shape}/{array.dtype} is not the recorded "
                                  f"{meta.get('shape')}/{meta.get('dtype')}")
        return array

    def save_array(self, kind: str, key: str, array: np.ndarray) -> None:
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        write_checksummed(self.path(kind, key, ".npy"), buffer.getvalue(), shape=list(array.shape),
                          dtype=str(array.dtype))

    def array(self, kind: str, key: str, compute: Callable[[], np.ndarray]) -> np.ndarray:
        """Return the cached array for ``key`` or compute, store and return it."""
        cached = self.load_array(kind, key)
        if cached is not None:
            return cached
        value = np.asarray(compute())
        self.save_array(kind, key, value)
        return value

    def load_json(self, kind: str, key: str) -> Any | None:
        """The stored JSON value, or ``None`` when absent or unusable (reported, deleted)."""
        path = self.path(kind, key, ".json")
        found = read_checksummed(path)
        if found is None:
            return None
        try:
            return json.loads(found[0].decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            return reject_entry(path, f"not JSON ({exc})")

    def save_json(self, kind: str, key: str, value: Any) -> None:
        write_checksummed(self.path(kind, key, ".json"), json.dumps(value).encode("utf-8"))

    def json(self, kind: str, key: str, compute: Callable[[], Any]) -> Any:
        """Return the cached JSON value for ``key`` or compute, store and return it."""
        cached = self.load_json(kind, key)
        if cached is not None:
            return cached
        value = compute()
        self.save_json(kind, key, value)
        return value
