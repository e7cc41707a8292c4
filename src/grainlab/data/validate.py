"""Check dataset files and loaded datasets before anything is computed from them.

Files are checked line by line (BEIR ``corpus.jsonl``/``queries.jsonl``/qrels) so an error names
the file and line (or byte offset); a loaded dataset is checked as a whole (nothing empty, every
judgment names a known query and document) and, for registered datasets, against the counts and
checksums of the releases the registry knows, so a file cut short at a line boundary is caught.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable, Iterator
from pathlib import Path

from grainlab.data.types import Dataset
from grainlab.errors import MalformedData

QRELS_HEADER = "query-id\tcorpus-id\tscore"


def decoded_lines(raw_lines: Iterable[bytes], name: object, bom: bool = False, where: str = "",
                  hint: str = "") -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of byte lines decoded as UTF-8 (a byte-order mark on the first line
    dropped when ``bom``); an undecodable line is a :class:`MalformedData` naming ``name``, the line
    and the byte offset (``where`` qualifies the offset, ``hint`` says what to do)."""
    offset = 0
    for number, raw in enumerate(raw_lines, start=1):
        try:
            text = raw.decode("utf-8-sig" if bom and number == 1 else "utf-8")
        except UnicodeDecodeError as exc:
            raise MalformedData(f"{name}:{number}: not UTF-8 (byte offset {offset + exc.start}{where}){hint}") from None
        offset += len(raw)
        yield number, text


def json_lines(lines: Iterable[tuple[int, str]], name: object) -> Iterator[tuple[int, object]]:
    """``(line number, value)`` of the non-blank numbered lines, each parsed as JSON; a line that
    is not JSON is a :class:`MalformedData` naming ``name`` and the line."""
    for number, line in lines:
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise MalformedData(f"{name}:{number}: not valid JSON ({exc.msg})") from None


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    with path.open("rb") as handle:
        yield from decoded_lines(handle, path, bom=True, hint="; re-save the file as UTF-8")


def check_jsonl(path: Path, required: tuple[str, ...] = ("_id",), strings: tuple[str, ...] = ("_id", "text")) -> int:
    """Raise :class:`MalformedData` naming the first bad line (not JSON, not an object, a missing
    field, a non-string id or text, a repeated ``_id``); return the record count."""
    count = 0
    seen: dict[str, int] = {}
    for number, record in json_lines(_lines(path), path):
        if not isinstance(record, dict):
            raise MalformedData(f"{path}:{number}: expected a JSON object, got {type(record).__name__}")
        missing = [key for key in required if key not in record]
        if missing:
            raise MalformedData(f"{path}:{number}: missing field(s) {missing}")
        for key in strings:
            if key in record and not isinstance(record[key], str):
                raise MalformedData(f"{path}:{number}: {key} must be a string, got "
                                    f"{type(record[key]).__name__} {record[key]!r:.40}")
        if "_id" in record:
            if record["_id"] in seen:
                raise MalformedData(f"{path}:{number}: _id {record['_id']!r} repeats line {seen[record['_id']]}; "
                                    f"ids must be unique")
            seen[record["_id"]] = number
        count += 1
    return count


def check_qrels_tsv(path: Path) -> int:
    """BEIR qrels: the header ``query-id<TAB>corpus-id<TAB>score``, then ``query-id<TAB>corpus-id<TAB>
    integer score`` lines. A file whose first line is a judgment is an error (BEIR's loader skips
    the first line, so that judgment would be lost without a word)."""
    count = 0
    for number, line in _lines(path):
        fields = line.rstrip("\r\n").split("\t")
        if number == 1:
            if len(fields) == 3 and fields[2].strip().lstrip("-").isdigit():
                raise MalformedData(f"{path}:1: the first line is a judgment ({line.strip()!r}), not the header "
                                    f"{QRELS_HEADER!r}; add the header (the loader skips the first line)")
            continue
        if not line.strip():
            continue
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


def check_dataset(dataset: Dataset, source: str = "") -> None:
    """Nothing empty; every judgment names a query and a document that exist."""
    where = source or str(dataset.info.get("source", dataset.name))
    for part in ("corpus", "queries", "qrels"):
        if not getattr(dataset, part):
            raise MalformedData(f"{where}: the dataset has an empty {part}; check the files (or the split) you loaded")
    for qid, docs in dataset.qrels.items():
        if qid not in dataset.queries:
            raise MalformedData(f"{where}: qrels judge query {qid!r}, which is not among the queries")
        unknown = [d for d in docs if d not in dataset.corpus]
        if unknown:
            raise MalformedData(f"{where}: qrels of query {qid!r} name document(s) {unknown[:3]} that are not in "
                                f"the corpus")


def counts(dataset: Dataset) -> dict[str, int]:
    return {"documents": len(dataset.corpus), "queries": len(dataset.queries),
            "judgments": sum(len(d) for d in dataset.qrels.values())}


@functools.lru_cache(maxsize=64)
def _sha256(path: str, size: int, mtime: float) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: Path) -> str:
    """SHA-256 of a file, memoised per (path, size, mtime)."""
    stat = path.stat()
    return _sha256(str(path), stat.st_size, stat.st_mtime)


def check_release(dataset: Dataset, files: dict[str, Path], releases: tuple[dict, ...], split: str = "test") -> None:
    """Compare a registered dataset with the releases the registry knows (per file SHA-256 and
    per split counts): files identical to a known release pass; otherwise the counts must be
    a known release's, else the files were cut short or are another release."""
    if not releases:
        return
    hashes = {name: file_sha256(path) for name, path in files.items()}
    if any(release.get("sha256") == hashes for release in releases):
        return
    found = counts(dataset)
    if any(release.get("counts", {}).get(split) == found for release in releases):
        return
    known = "; ".join(f"{r.get('name', '?')}: {r.get('counts', {}).get(split)}" for r in releases)
    raise MalformedData(f"{dataset.name} ({', '.join(str(p) for p in files.values())}) has {found} in split "
                        f"{split!r}, matching no known release ({known}), and its files differ from theirs: it may be "
                        f"cut short or corrupted. Copy or download it again.")
