"""Lost in the Middle inputs (Liu et al.): multi-document QA examples and key–value records.

The official 10/20/30-document files are read when present (mirror or download); offline, the
same shape is built from ``nq-open-oracle.jsonl.gz`` by the experiments layer (distractors
retrieved from the other questions' gold passages). Key–value examples come from the official
75/140/300-key files; the gold pair is moved to the requested index.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from grainlab.data.locate import ensure_local
from grainlab.data.qa_formats import read_jsonl
from grainlab.data.registry import LITM_POSITIONS, get_spec
from grainlab.errors import ConfigError, MalformedData

Passage = tuple[str, str]  # (title, text)


@dataclass(frozen=True)
class MultiDocExample:
    """A question, its answers, its gold passage and distractors in decreasing relevance."""

    qid: str
    question: str
    answers: list[str]
    gold: Passage
    distractors: list[Passage]
    info: dict[str, object] = field(default_factory=dict, compare=False)

    def documents(self, n_docs: int, gold_index: int) -> list[Passage]:
        """``n_docs`` passages: the ``n_docs − 1`` most relevant distractors with the gold one
        inserted at ``gold_index`` (0-based)."""
        if not 0 <= gold_index < n_docs:
            raise ConfigError(f"gold index {gold_index} is outside 0..{n_docs - 1}")
        if len(self.distractors) < n_docs - 1:
            raise ConfigError(f"{self.qid} has {len(self.distractors)} distractors, {n_docs - 1} needed")
        docs = list(self.distractors[:n_docs - 1])
        docs.insert(gold_index, self.gold)
        return docs


def load_multidoc_file(path: Path) -> list[MultiDocExample]:
    """An official multi-document file: each line's ``ctxs`` hold one ``isgold`` passage; the
    others, in file order, are the distractors."""
    examples = []
    for number, record in read_jsonl(path):
        try:
            ctxs = record["ctxs"]
            golds = [c for c in ctxs if c.get("isgold")]
            if len(golds) != 1:
                raise KeyError(f"{len(golds)} gold passages")
            examples.append(MultiDocExample(
                qid=f"nq-{number - 1}", question=record["question"], answers=list(record["answers"]),
                gold=(golds[0]["title"], golds[0]["text"]),
                distractors=[(c["title"], c["text"]) for c in ctxs if not c.get("isgold")],
                info={"source": str(path), "gold_index_in_file": ctxs.index(golds[0])}))
        except (KeyError, TypeError) as exc:
            raise MalformedData(f"{path}:{number}: expected question, answers and ctxs with one gold ({exc})") from exc
    return examples


def load_official_multidoc(n_docs: int, gold_index: int, mirror: str | os.PathLike | None = None,
                           allow_download: bool = True) -> list[MultiDocExample]:
    """The paper's own file for ``n_docs`` documents with the gold passage at ``gold_index``."""
    if gold_index not in LITM_POSITIONS.get(n_docs, ()):
        raise ConfigError(f"the paper ships {n_docs}-document files for gold positions "
                          f"{LITM_POSITIONS.get(n_docs, ())}, not {gold_index}")
    spec = get_spec(f"litm_nq_{n_docs}docs_gold_at_{gold_index}")
    return load_multidoc_file(ensure_local(spec, mirror, allow_download=allow_download))


@dataclass(frozen=True)
class KVExample:
    records: list[tuple[str, str]]
    key: str
    value: str

    def shortened(self, n_records: int) -> KVExample:
        """The same query over ``n_records`` records: the queried pair and the first others."""
        if n_records < 2:
            raise ConfigError("key–value retrieval needs at least 2 records")
        others = [r for r in self.records if r[0] != self.key][:n_records - 1]
        return KVExample([(self.key, self.value), *others], self.key, self.value)

    def with_gold_at(self, index: int) -> list[tuple[str, str]]:
        """The records with the queried pair moved to ``index`` (the others keep their order)."""
        if not 0 <= index < len(self.records):
            raise ConfigError(f"gold index {index} is outside 0..{len(self.records) - 1}")
        others = [r for r in self.records if r[0] != self.key]
        others.insert(index, (self.key, self.value))
        return others


def load_kv_examples(n_keys: int = 75, mirror: str | os.PathLike | None = None,
                     allow_download: bool = True) -> list[KVExample]:
    spec = get_spec(f"litm_kv_{n_keys}")
    path = ensure_local(spec, mirror, allow_download=allow_download)
    out = []
    for number, record in read_jsonl(path):
        try:
            records = [(str(k), str(v)) for k, v in record["ordered_kv_records"]]
            example = KVExample(records, str(record["key"]), str(record["value"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise MalformedData(f"{path}:{number}: expected ordered_kv_records, key and value ({exc})") from exc
        if (example.key, example.value) not in records:
            raise MalformedData(f"{path}:{number}: the key–value pair asked for is not among the records")
        out.append(example)
    return out


def positions(n: int, count: int = 5) -> list[int]:
    """The paper's evenly spaced gold positions: 0, then every ``(n−1)/(count−1)`` … up to ``n − 1``
    (10 → 0, 4, 9 with ``count=3``; 20 → 0, 4, 9, 14, 19; 140 → 0, 34, 69, 104, 139)."""
    if n <= 1 or count <= 1:
        return [0]
    step = n / (count - 1)
    return sorted({min(n - 1, max(0, round(i * step) - 1)) for i in range(count)})

