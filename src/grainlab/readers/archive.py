"""An append-only archive of generations, kept with a study's results so a long run resumes on
another machine.

The on-disk cache lives on one machine; a full-profile reader run can take longer than a session,
and the next session may start on a fresh machine. A reader given an archive appends every new
generation to it (one JSON line: the generation's content key and its record, flushed and synced
as it is made) and reads it before generating, so committing the archive while a run goes on keeps
everything finished. Keys are the cache's content keys (model file, decoding settings, prompt,
grammar, reader code), so an archived generation is only ever reused for exactly the same request.
A torn last line (a run killed mid-write) is skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

ARCHIVE_ENV = "GRAINLAB_GENERATION_ARCHIVE"
ARCHIVE_NAME = "generations.jsonl"


class GenerationArchive:
    """``{content key: generation record}`` in a JSON-lines file."""

    def __init__(self, path: str | os.PathLike) -> None:
        self.path = Path(path)
        self._records: dict[str, dict[str, Any]] | None = None

    def records(self) -> dict[str, dict[str, Any]]:
        if self._records is None:
            self._records = {}
            if self.path.exists():
                for line in self.path.read_text("utf-8").splitlines():
                    try:
                        entry = json.loads(line)
                    except ValueError:
                        continue  # a torn line from an interrupted write
                    if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                        self._records[entry.pop("key")] = entry
        return self._records

    def get(self, key: str) -> dict[str, Any] | None:
        found = self.records().get(key)
        return dict(found) if found is not None else None

    def append(self, key: str, record: dict[str, Any]) -> None:
        if key in self.records():
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"key": key, **record}, ensure_ascii=False) + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        self.records()[key] = dict(record)

    def __len__(self) -> int:
        return len(self.records())


_OPEN: dict[str, GenerationArchive] = {}


def archive_from_environment() -> GenerationArchive | None:
    """The archive ``$GRAINLAB_GENERATION_ARCHIVE`` names (``notebook_setup`` points it at the
    notebook's results folder), one object per path in a process; ``None`` when unset."""
    value = os.environ.get(ARCHIVE_ENV)
    if not value:
        return None
    if value not in _OPEN:
        _OPEN[value] = GenerationArchive(value)
    return _OPEN[value]
