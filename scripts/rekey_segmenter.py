"""Move stored per-query tables to the keys of sentence segmenter 4 where it provably cuts as 3 did.

Segmenter 4 (``chunking.sentences``) mends pysbd's Japanese sentence starts
(``japanese_starts``); English text goes through pysbd alone, as before. A table moves to its new key
when both hold:

- its recorded key is the key the current code gives it with the segmenter's version set back to 3
  (nothing else about it changed), and
- its data is cut into the same sentences: no document holds any of ``。！？」』）】`` (without them
  the mend changes no start), or chunking every document with the system's chunker calls the mend
  without it moving, adding or dropping one start.

Every other table keeps its old key, with the reason (the next run recomputes it;
``pack-results --prune`` keeps it until then). Run ``grainlab verify`` after it.

    python scripts/rekey_segmenter.py [--results results] [--dry-run]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from grainlab.chunking import sentences
from grainlab.chunking.base import _REGISTRY
from grainlab.chunking.factory import get_chunker
from grainlab.data import load_dataset
from grainlab.data.types import Dataset
from grainlab.errors import GrainlabError
from grainlab.experiments.identity import results_key
from grainlab.experiments.systems import System
from grainlab.experiments.verify import recorded_dataset

sys.path.insert(0, str(Path(__file__).parent))
from migrate_keys import migrate_experiment  # noqa: E402 - the key migration's own move

OLD, NEW = "3", sentences.SEGMENTER_VERSION
MENDED = "。！？」』）】"


SEGMENTED = {f"grainlab.chunking.{name}" for name in ("sentences", "passages", "structure", "propositions", "semantic")}


def _segmenter_versioned() -> list[type]:
    """The registered chunkers whose version carries the segmenter's (``2.4``, ``1.4-…``): those of
    the modules that build it from ``SEGMENTER_VERSION``."""
    return [cls for cls in _REGISTRY.values() if cls.__module__ in SEGMENTED]


@contextlib.contextmanager
def segmenter_version(version: str) -> Iterator[None]:
    """The segmenter-carrying chunkers' versions as segmenter ``version`` would write them."""
    classes = _segmenter_versioned()
    saved = {cls: cls.version for cls in classes}
    try:
        for cls in classes:
            major, rest = cls.version.split(".", 1)
            cls.version = f"{major}.{version}{rest[len(NEW):]}"
        yield
    finally:
        for cls, value in saved.items():
            cls.version = value


def same_sentences(dataset: Dataset, chunker: str) -> str | None:
    """``None`` when segmenter 4 cuts ``dataset`` for ``chunker`` as segmenter 3 did, else why not."""
    docs = list(dataset.corpus.values())
    if not any(mark in doc.text for doc in docs for mark in MENDED):
        return None
    moved: list[int] = []
    mend = sentences.japanese_starts

    def watched(text: str, starts: list[int]) -> list[int]:
        mended = mend(text, starts)
        if mended != list(starts):
            moved.append(1)
        return mended

    sentences._sentence_spans.cache_clear()
    sentences.japanese_starts = watched
    try:
        get_chunker(chunker).chunk_many(docs)
    finally:
        sentences.japanese_starts = mend
        sentences._sentence_spans.cache_clear()
    return f"the mend changes {len(moved)} Japanese sentence segmentations" if moved else None


def proven_tables(manifest_path: Path) -> tuple[dict[str, dict], list[str]]:
    """``{label: {"match": True, "key": old}}`` for the tables proven unchanged, and why the others stay."""
    manifest = json.loads(manifest_path.read_text("utf-8"))
    parameters = manifest["parameters"]
    proven, stayed = {}, []
    dataset: Dataset | None = None
    for label, entry in manifest["systems"].items():
        system = System.from_name(entry["name"])
        key = (parameters["dataset_fingerprint"], system, list(parameters["measures"]), int(parameters["depth"]))
        try:
            if results_key(*key) == entry["key"]:
                continue
            with segmenter_version(OLD):
                old_scheme = results_key(*key) == entry["key"]
        except GrainlabError as exc:  # a model this machine lacks: its revision is part of the key
            stayed.append(f"{manifest_path.parent}: {label}: its key cannot be computed here ({exc})"[:300])
            continue
        if not old_scheme:
            stayed.append(f"{manifest_path.parent}: {label}: its key differs for more than the segmenter")
            continue
        try:
            dataset = dataset or recorded_dataset(parameters, load_dataset)
        except GrainlabError as exc:
            stayed.append(f"{manifest_path.parent}: {label}: its data cannot be rebuilt ({exc})"[:300])
            continue
        if dataset is None:
            stayed.append(f"{manifest_path.parent}: {label}: its data could not be rebuilt with its fingerprint")
            continue
        why = same_sentences(dataset, system.chunker)
        if why:
            stayed.append(f"{manifest_path.parent}: {label}: {why}")
            continue
        proven[label] = {"match": True, "key": entry["key"]}
    return proven, stayed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()
    total, kept = 0, []
    for manifest_path in sorted(args.results.glob("**/manifest.json")):
        if not (json.loads(manifest_path.read_text("utf-8")).get("systems") or {}):
            continue
        proven, stayed = proven_tables(manifest_path)
        kept += stayed
        if proven:
            moved, _ = migrate_experiment(manifest_path, proven, args.dry_run)
            total += moved
            print(f"{manifest_path.parent}: {moved} re-keyed to segmenter {NEW}")
    for line in kept:
        print(f"kept: {line}")
    print(f"{total} tables re-keyed, {len(kept)} kept under their old keys")
    return 0


if __name__ == "__main__":
    sys.exit(main())
