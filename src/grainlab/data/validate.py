"""Check BEIR files line by line before handing them to ``beir``'s loader."""

from __future__ import annotations

import json
from pathlib import Path

from grainlab.errors import MalformedData


def check_jsonl(path: Path, required: tuple[str, ...] = ("_id",)) -> int:
    """Raise :class:`MalformedData` naming the first bad line; return the line count."""
    count = 0
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise MalformedData(f"{path}:{number}: not valid JSON ({exc.msg})") from exc
            if not isinstance(record, dict):
                raise MalformedData(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
            missing = [key for key in required if key not in record]
            if missing:
                raise MalformedData(f"{path}:{number}: missing field(s) {missing}")
            count += 1
    return count


def check_qrels_tsv(path: Path) -> int:
    """BEIR qrels: a header, then ``query-id<TAB>corpus-id<TAB>integer score`` lines."""
    count = 0
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if number == 1 or not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3:
                raise MalformedData(
                    f"{path}:{number}: expected 3 tab-separated fields "
                    f"(query-id, corpus-id, score), got {len(fields)}: {line.strip()!r}"
                )
            try:
                int(fields[2])
            except ValueError as exc:
                raise MalformedData(f"{path}:{number}: relevance {fields[2]!r} is not an integer") from exc
            count += 1
    return count

