"""Find a dataset's files: the local mirror first, then the download cache, then download."""

from __future__ import annotations

import os
from pathlib import Path

from grainlab import settings
from grainlab.data.download import fetch, unpack_zip_folder
from grainlab.data.registry import DatasetSpec
from grainlab.errors import DatasetNotFound


def local_path(spec: DatasetSpec, mirror: str | os.PathLike | None = None) -> Path | None:
    """The dataset's path in the mirror or the download cache, if it is there."""
    root = settings.mirror_dir(mirror)
    candidates = []
    if root is not None:
        candidates.append(root / spec.mirror_path)
    candidates.append(settings.download_dir() / spec.mirror_path)
    for candidate in candidates:
        if candidate.exists():
            return candidate
    return None


def how_to_get(spec: DatasetSpec, mirror: str | os.PathLike | None = None) -> str:
    root = settings.mirror_dir(mirror)
    where = f"the mirror {root} has no {spec.mirror_path}" if root else "no mirror is configured"
    return (
        f"dataset {spec.name!r} is not available here ({where}). Either set "
        f"{settings.MIRROR_ENV} (or pass --mirror) to a folder holding '{spec.mirror_path}', "
        f"or go online so it can be downloaded from {spec.url}."
    )


def download(spec: DatasetSpec) -> Path:
    """Fetch the dataset from its official URL into the download cache (BEIR: the zip BEIR's own
    downloader fetches, checked against BEIR's published MD5, then unpacked). Nothing is left
    behind when it fails."""
    target = settings.download_dir() / spec.mirror_path
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        if spec.files:
            fetch_folder(spec, target)
        elif spec.kind == "beir":
            archive = target.parent / f".{target.name}.zip"
            try:
                fetch(spec.url, archive, md5=spec.md5)
                unpack_zip_folder(archive, target)
            finally:
                archive.unlink(missing_ok=True)
        else:
            fetch(spec.url, target, md5=spec.md5)
    except OSError as exc:
        raise DatasetNotFound(how_to_get(spec) + f" (download failed: {exc})") from exc
    return target


def fetch_folder(spec: DatasetSpec, target: Path) -> Path:
    """Each of ``spec.files`` from ``spec.url``, checked against the SHA-256 of the first release
    that records one, into a hidden folder renamed to ``target`` once all arrived."""
    import shutil
    import tempfile

    from grainlab.files import ordinary_mode

    digests = next((r["sha256"] for r in spec.releases if r.get("sha256")), {})
    staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}."))
    try:
        for name in spec.files:
            fetch(f"{spec.url}/{name}", staging / name, sha256=digests.get(name, ""))
        os.chmod(staging, ordinary_mode(directory=True))  # mkdtemp's 0700 otherwise
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def ensure_local(spec: DatasetSpec, mirror: str | os.PathLike | None = None, allow_download: bool = True) -> Path:
    """A local path for ``spec``: mirror, download cache, or a fresh download."""
    path = local_path(spec, mirror)
    if path is not None:
        return path
    if not allow_download:
        raise DatasetNotFound(how_to_get(spec, mirror))
    return download(spec)
