"""Writing files atomically (a temporary sibling renamed into place) with the permissions an
ordinary ``open()`` would give them.

``tempfile.mkstemp``/``mkdtemp`` create ``0600``/``0700`` entries whatever the umask, so a renamed
temporary file would be readable by its owner only: colleagues on a shared results disk or a shared
cache could not read it. Every writer here sets the mode ``open()`` would have set (``0666`` or
``0777`` less the process umask). How a file is written is not what it holds: no results key names
this module (``experiments.identity``), so fixing a writer never invalidates a stored table.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any


def current_umask() -> int:
    """The process umask (read by setting and restoring it: there is no getter before Python 3.13's
    ``os.umask`` wrappers, and ``/proc`` is Linux only)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def ordinary_mode(directory: bool = False) -> int:
    """The mode ``open()`` (``0666``) or ``mkdir()`` (``0777``) gives a new entry under the umask."""
    return (0o777 if directory else 0o666) & ~current_umask()


def atomic_write(path: Path, write: Callable[[Any], None], mode: str = "wb") -> None:
    """Call ``write(handle)`` on a temporary sibling of ``path``, flush it to disk, give it the
    ordinary mode and rename it into place: a crash never leaves half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode) as handle:
            write(handle)
            handle.flush()
            os.fchmod(handle.fileno(), ordinary_mode())
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file and a rename."""
    atomic_write(path, lambda handle: handle.write(text.encode("utf-8")))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    atomic_write(path, lambda handle: handle.write(data))


def atomic_write_dir(path: Path, write: Callable[[Path], None]) -> None:
    """Fill a temporary sibling folder with ``write(folder)``, then rename it to ``path``. A failed
    write leaves nothing behind; if another process renamed its copy into place first, theirs stays."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    try:
        write(tmp)
        os.chmod(tmp, ordinary_mode(directory=True))
        os.replace(tmp, path)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not path.exists():
            raise
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def rewrite_blocks(path: Path, blocks: dict[tuple[str, str], Callable[[], str]]) -> tuple[bool, bool]:
    """Replace each generated block ``path`` holds — the text from a ``begin`` marker to its
    ``end`` marker, both included — by what its function returns, written atomically; returns
    (whether any block was there, whether the file changed)."""
    import re

    text = Path(path).read_text("utf-8")
    updated, found = text, False
    for (begin, end), block in blocks.items():
        pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
        if pattern.search(updated):
            found = True
            updated = pattern.sub(lambda _, block=block: block(), updated)
    if updated != text:
        atomic_write_text(Path(path), updated)
    return found, updated != text
