"""Check dataset files and loaded datasets before anything is computed from them.

Files are checked line by line (BEIR ``corpus.jsonl``/``queries.jsonl``/qrels) so an error names
the file and line (or byte offset); a loaded dataset is checked as a whole (nothing empty, every
judgment names a known query and document) and, for registered datasets, against the counts and
checksums of the releases the registry knows, so a file cut short at a line boundary is caught.
"""

from __future__ import annotations

import csv
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


BEIR_LOADER = "beir's GenericDataLoader"


def _beir_lines(path: Path, bom_allowed: bool = False) -> Iterator[tuple[int, str]]:
    """The decoded lines of a file that beir's loader will read after us, refusing what it cannot
    read: a UTF-8 byte-order mark (its ``json.loads`` fails on the first line) and blank lines (a
    blank corpus or queries line is not JSON; a blank qrels line has no fields). So the check and the
    loader agree on what a BEIR file is, and the error names the line instead of beir's traceback.
    ``bom_allowed``: qrels, whose first line (the header) beir skips unread."""
    with path.open("rb") as handle:
        for number, line in decoded_lines(handle, path, hint="; re-save the file as UTF-8"):
            if number == 1 and line.startswith("\ufeff") and not bom_allowed:
                raise MalformedData(f"{path}:1: the file starts with a UTF-8 byte-order mark, which {BEIR_LOADER} "
                                    f"cannot read; re-save it as UTF-8 without BOM")
            if not line.strip():
                raise MalformedData(f"{path}:{number}: blank line, which {BEIR_LOADER} cannot read; delete it "
                                    f"(a BEIR file has one record on every line)")
            yield number, line


def check_jsonl(path: Path, required: tuple[str, ...] = ("_id",), strings: tuple[str, ...] = ("_id", "text")) -> int:
    """Raise :class:`MalformedData` naming the first bad line (a byte-order mark, a blank line, not
    JSON, not an object, a missing field, a non-string id or text, a repeated ``_id``); return the
    record count."""
    count = 0
    seen: dict[str, int] = {}
    for number, record in json_lines(_beir_lines(path), path):
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
    for number, line in _beir_lines(path, bom_allowed=True):
        fields = next(csv.reader([line.rstrip("\r\n")], delimiter="\t", quoting=csv.QUOTE_MINIMAL), [])  # as beir splits
        if number == 1:
            if len(fields) == 3 and fields[2].strip().lstrip("-").isdigit():
                raise MalformedData(f"{path}:1: the first line is a judgment ({line.strip()!r}), not the header "
                                    f"{QRELS_HEADER!r}; add the header (the loader skips the first line)")
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
    """Nothing empty, at least one positive judgment, every judgment names a query and a document
    that exist."""
    where = source or str(dataset.info.get("source", dataset.name))
    for part in ("corpus", "queries", "qrels"):
        if not getattr(dataset, part):
            raise MalformedData(f"{where}: the dataset has an empty {part}; check the files (or the split) you loaded")
    if not any(grade > 0 for docs in dataset.qrels.values() for grade in docs.values()):
        raise MalformedData(f"{where}: the qrels hold no positive judgment (relevance > 0), so every measure would "
                            f"be 0; check the relevance column (the third) and the split you loaded")
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
                        f"cut short or corrupted. Copy or download it again. If it is your own folder under the "
                        f"registered name, load it by path instead (load_dataset('/path/to/folder'), "
                        f"grainlab evaluate --dataset /path/to/folder) or set GRAINLAB_VERIFY_RELEASES=0.")
