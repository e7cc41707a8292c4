"""Fetch a dataset from its official URL: stream to a temporary file, check the HTTP status, the
length and the published checksum, unpack beside the target, then rename into place. Any failure
(server error, connection cut mid-file, checksum mismatch, bad archive) is a clear error and
leaves nothing behind: a dataset folder or file exists only once it is complete."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

from grainlab.errors import DatasetNotFound
from grainlab.files import ordinary_mode
from grainlab.settings import MIRROR_ENV

CHUNK = 1 << 16
MIRROR_HINT = (f"read a local copy: set {MIRROR_ENV}=/path/to/mirror (a notebook's MIRROR parameter, "
               "grainlab's --mirror), the folder holding the datasets in their original layouts")


class DownloadFailed(DatasetNotFound):
    """A download did not complete or did not match its published checksum."""


def fetch(url: str, target: Path, md5: str = "", timeout: float = 60.0, progress: bool = True,
          sha256: str = "") -> Path:
    """Download ``url`` to ``target`` (atomically); check the status, the announced length and,
    when given, the MD5 the publisher lists or the SHA-256 the registry records."""
    import requests
    from tqdm.auto import tqdm

    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    tmp = Path(tmp_name)
    digest = hashlib.md5()  # noqa: S324 (the checksum BEIR and SQuAD publish)
    strong = hashlib.sha256()
    received = 0
    try:
        try:
            with requests.get(url, stream=True, timeout=timeout) as response:
                if response.status_code != 200:
                    raise DownloadFailed(f"{url} answered HTTP {response.status_code} {response.reason}; "
                                         f"nothing was saved. Try again later, or {MIRROR_HINT}")
                expected = int(response.headers.get("Content-Length") or 0)
                with os.fdopen(fd, "wb") as handle, tqdm(total=expected or None, unit="B", unit_scale=True,
                                                          desc=f"download {target.name}", disable=not progress) as bar:
                    for block in response.iter_content(CHUNK):
                        handle.write(block)
                        digest.update(block)
                        strong.update(block)
                        received += len(block)
                        bar.update(len(block))
        except requests.RequestException as exc:
            reason = "cannot reach the server (offline?)" if isinstance(exc, requests.ConnectionError) and \
                not received else f"{type(exc).__name__}: {str(exc)[:160]}"
            raise DownloadFailed(f"downloading {url} failed after {received:,} bytes ({reason}); nothing was "
                                 f"saved. Try again, or {MIRROR_HINT}") from None
        if expected and received != expected:
            raise DownloadFailed(f"downloading {url} stopped after {received:,} of {expected:,} bytes; "
                                 f"nothing was saved. Try again")
        if md5 and digest.hexdigest() != md5:
            raise DownloadFailed(f"{url} has MD5 {digest.hexdigest()}, not the published {md5}: the file is "
                                 f"damaged or was changed upstream; nothing was saved")
        if sha256 and strong.hexdigest() != sha256:
            raise DownloadFailed(f"{url} has SHA-256 {strong.hexdigest()}, not the recorded {sha256}: the file is "
                                 f"damaged or was changed upstream; nothing was saved")
        os.chmod(tmp, ordinary_mode())  # mkstemp's 0600 would keep colleagues out of a shared cache
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    return target


def unpack_zip_folder(archive: Path, target: Path) -> Path:
    """Unpack a zip holding one top-level folder (as BEIR's zips do) into ``target``, atomically."""
    work = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"))
    try:
        try:
            with zipfile.ZipFile(archive) as bundle:
                for member in bundle.namelist():
                    if member.startswith(("/", "\\")) or ".." in Path(member).parts:
                        raise DownloadFailed(f"{archive}: member {member!r} would unpack outside the dataset folder")
                bundle.extractall(work)
        except zipfile.BadZipFile as exc:
            raise DownloadFailed(f"{archive} is not a readable zip ({exc}); delete it and download again") from None
        tops = [p for p in work.iterdir() if not p.name.startswith("__MACOSX")]
        if len(tops) != 1 or not tops[0].is_dir():
            raise DownloadFailed(f"{archive} should hold one folder, holds {sorted(p.name for p in tops)}")
        os.replace(tops[0], target)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return target
