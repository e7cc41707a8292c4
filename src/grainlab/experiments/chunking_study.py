"""Chunking evaluated on its own: segmentation AMI against known boundaries, and per chunker
the answer recall, gold-span coverage, token overlap and index cost of retrieval.

Gold spans are the occurrences of a question's answer strings in its judged document; on
stitched documents each answer occurs exactly once (the stitcher keeps only such questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from grainlab import settings
from grainlab.cache import ArtifactCache, atomic_write_text
from grainlab.chunking.base import get_chunker
from grainlab.chunking.fixed import FixedTokenChunker
from grainlab.chunking.sentences import sentence_spans
from grainlab.chunking.structure import ParentChildChunker
from grainlab.data.types import Dataset
from grainlab.errors import ConfigError
from grainlab.evaluation.answers import answer_recall
from grainlab.evaluation.registry import SPAN_COVERED, SPAN_IOU, SPAN_PRECISION, SPAN_RECALL, TOKENS
from grainlab.evaluation.spans import (
    Span,
    boundary_retention,
    covers,
    duplication_rate,
    fixed_window_count,
    segmentation_ami,
    sentence_labels,
    span_overlap,
)
from grainlab.experiments.chunk_cache import chunk_corpus
from grainlab.experiments.experiment import chunk_and_index
from grainlab.experiments.identity import results_key
from grainlab.experiments.store import slug, stored_table
from grainlab.models.tokenizers import get_tokenizer
from grainlab.settings import DEFAULT_TOKENIZER
from grainlab.spec import format_spec, parse_spec
from grainlab.types import Chunk


def answer_spans(dataset: Dataset) -> dict[str, list[Span]]:
    """Every occurrence of every gold answer string in each question's judged documents."""
    out: dict[str, list[Span]] = {}
    for qid, answers in dataset.answers.items():
        spans = []
        for doc_id in dataset.qrels.get(qid, {}):
            text = dataset.corpus[doc_id].text
            for answer in answers:
                start = text.find(answer)
                while answer and start >= 0:
                    spans.append((doc_id, start, start + len(answer)))
                    start = text.find(answer, start + 1)
        out[qid] = spans
    return out


def gold_segments(dataset: Dataset, level: str = "article") -> dict[str, list[tuple[int, int]]]:
    """Known topic boundaries of stitched documents: source paragraphs (``level="paragraph"``) or
    runs of paragraphs from one source article (``"article"``, where the source says which)."""
    segments = dataset.info.get("segments")
    if not segments:
        raise ConfigError(f"{dataset.name} has no known segment boundaries: use a '<name>_stitched' dataset")
    article_of = dataset.info.get("article_of") or {}
    out = {}
    for doc_id, parts in segments.items():  # type: ignore[union-attr]
        spans: list[tuple[int, int]] = []
        owners: list[object] = []
        for source, start, end in parts:
            owner = article_of.get(source, source) if level == "article" else source
            if spans and owners[-1] == owner:
                spans[-1] = (spans[-1][0], end)
            else:
                spans.append((start, end))
                owners.append(owner)
        out[doc_id] = spans
    return out


def segmentation_table(dataset: Dataset, chunkers: dict[str, str], level: str = "article",
                       cache: ArtifactCache | None = None) -> pd.DataFrame:
    """AMI between each chunker's segmentation and the gold one, per stitched document.

    Units are the document's sentences: each is labelled by the chunk (and the gold segment)
    holding its midpoint, so every chunker is scored on the same items."""
    gold = gold_segments(dataset, level)
    fingerprint = dataset.fingerprint()
    rows = []
    for label, spec in chunkers.items():
        chunks = chunk_corpus(dataset, get_chunker(spec), cache, fingerprint)
        by_doc: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_doc.setdefault(chunk.doc_id, []).append(chunk)
        for doc_id, doc in dataset.corpus.items():
            sentences = sentence_spans(doc.text)
            predicted = sentence_labels(sentences, [(c.start, c.end) for c in by_doc.get(doc_id, [])])
            truth = sentence_labels(sentences, gold[doc_id])
            rows.append({"dataset": dataset.name, "chunker": label, "spec": spec, "doc_id": doc_id,
                         "level": level, "ami": segmentation_ami(predicted, truth),
                         "n_chunks": len(by_doc.get(doc_id, [])), "n_segments": len(gold[doc_id]),
                         "n_sentences": len(sentences)})
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ChunkingSystem:
    """A chunker and a retriever; ``parents=True`` searches the children of a ``parent_child``
    chunker and returns their parents (score = best child)."""

    chunker: str
    retriever: str
    label: str
    parents: bool = False

    def __post_init__(self) -> None:
        chunker = get_chunker(self.chunker)
        object.__setattr__(self, "chunker", chunker.spec)
        name, params = parse_spec(self.retriever)
        object.__setattr__(self, "retriever", format_spec(name, params))
        if self.parents and not isinstance(chunker, ParentChildChunker):
            raise ConfigError(f"{self.label}: parents=True needs a parent_child chunker, got {self.chunker}")


def _document_tokens(dataset: Dataset) -> dict[str, list[int]]:
    tok = get_tokenizer(DEFAULT_TOKENIZER)
    return {d: tok.token_starts(doc.text) for d, doc in dataset.corpus.items()}


def _span_rows(qid: str, shown: list[Chunk], gold: list[Span], ks: Sequence[int],
               token_starts: dict[str, list[int]]) -> list[tuple[str, str, float]]:
    rows = []
    for k in ks:
        top = shown[:k]
        rows.append((qid, TOKENS @ k, float(sum(u.n_tokens for u in top))))
        if not gold:
            continue
        overlap = span_overlap(top, gold, token_starts)
        rows += [(qid, SPAN_COVERED @ k, float(any(covers(u, g) for u in top for g in gold))),
                 (qid, SPAN_RECALL @ k, overlap["recall"]), (qid, SPAN_PRECISION @ k, overlap["precision"]),
                 (qid, SPAN_IOU @ k, overlap["iou"])]
    return rows


def _system_info(dataset: Dataset, system: ChunkingSystem, units: list[Chunk],
                 gold: dict[str, list[Span]]) -> dict[str, Any]:
    chunker = get_chunker(system.chunker)
    tok = get_tokenizer(getattr(chunker, "tokenizer", DEFAULT_TOKENIZER))
    doc_tokens = {d: tok.count(doc.text) for d, doc in dataset.corpus.items()}
    fixed = isinstance(chunker, FixedTokenChunker)
    # token windows count the tokens they cover; other chunks their own (re-tokenised) count
    covered = [u.token_end - u.token_start if fixed else u.n_tokens for u in units]  # type: ignore[operator]
    info: dict[str, Any] = {"chunker_version": chunker.version_string, "n_units": len(units),
                            "mean_unit_tokens": float(np.mean([u.n_tokens for u in units])) if units else 0.0,
                            "index_tokens": int(sum(u.n_tokens for u in units)),
                            "duplication_rate": duplication_rate(covered, sum(doc_tokens.values())),
                            "boundary_retention": boundary_retention(units, [s for spans in gold.values() for s in spans])}
    if fixed:
        info["formula_units"] = sum(fixed_window_count(t, chunker.size, chunker.overlap) for t in doc_tokens.values())
    return info


def run_chunking_system(dataset: Dataset, system: ChunkingSystem, ks: Sequence[int], cache: ArtifactCache,
                        token_starts: dict[str, list[int]], gold: dict[str, list[Span]], fingerprint: str
                        ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Chunk, index, search; per-query answer recall and span metrics, plus the index's costs."""
    chunker = get_chunker(system.chunker)
    units, retriever, timings = chunk_and_index(dataset, chunker, system.retriever, cache, fingerprint)
    if system.parents:
        assert isinstance(chunker, ParentChildChunker)
        shown_units = [p for doc in dataset.corpus.values() for p in chunker.parents_of(doc)]
        run = retriever.search(dataset.queries, k=max(ks), aggregate="max", group_by="parent")
    else:
        shown_units = units
        run = retriever.search(dataset.queries, k=max(ks))
    by_id = {u.chunk_id: u for u in shown_units}
    table = answer_recall(run, {u.chunk_id: u.text for u in shown_units}, dataset.answers, ks)
    span_rows = [row for qid in dataset.answers
                 for row in _span_rows(qid, [by_id[uid] for uid, _ in run.get(qid, [])], gold.get(qid, []),
                                       ks, token_starts)]
    table = pd.concat([table, pd.DataFrame(span_rows, columns=["qid", "measure", "value"])], ignore_index=True)
    info = {**_system_info(dataset, system, shown_units if system.parents else units, gold),
            "retriever_spec": retriever.spec, **timings,
            "n_children": len(units) if system.parents else None}
    return table, info


@dataclass
class ChunkingStudy:
    per_query: pd.DataFrame
    aggregate: pd.DataFrame
    systems: pd.DataFrame
    folder: Path


def run_chunking_study(dataset: Dataset, systems: Sequence[ChunkingSystem], name: str,
                       ks: Sequence[int] = (1, 3, 5), results_dir: str | Path | None = None,
                       cache: ArtifactCache | None = None) -> ChunkingStudy:
    """Every system on a QA dataset; tidy per-query rows saved system by system (resumable)."""
    if not dataset.is_qa:
        raise ConfigError(f"{dataset.name} has no answer strings: the chunking study needs a QA dataset")
    labels = [s.label for s in systems]
    if len(set(labels)) != len(labels):
        raise ConfigError(f"duplicate system labels: {labels}")
    cache = cache or ArtifactCache()
    folder = settings.results_dir(results_dir) / name
    fingerprint = dataset.fingerprint()
    gold = answer_spans(dataset)
    token_starts = _document_tokens(dataset)
    frames, infos = [], []
    for system in tqdm(systems, desc=f"{name}: systems"):
        key = results_key(fingerprint, system.chunker, system.retriever, code=("experiments.chunking_study",),
                          parents=system.parents, ks=list(ks))

        def compute(system: ChunkingSystem = system) -> tuple[pd.DataFrame, dict[str, Any]]:
            return run_chunking_system(dataset, system, ks, cache, token_starts, gold, fingerprint)

        readable = f"{slug(system.label)[:40]}__{slug(system.chunker)[:60]}"
        table, info = stored_table(folder / "per_query", key, readable, compute)
        table = table.assign(dataset=dataset.name, system=system.label, chunker=system.chunker,
                             retriever=system.retriever)
        frames.append(table)
        infos.append({"dataset": dataset.name, "system": system.label, "chunker": system.chunker,
                      "retriever": system.retriever, "parents": system.parents, **info})
    per_query = pd.concat(frames, ignore_index=True)
    aggregate = (per_query.groupby(["dataset", "system", "measure"], sort=False)["value"]
                 .agg(["mean", "count"]).reset_index())
    systems_table = pd.DataFrame(infos)
    atomic_write_text(folder / "per_query.csv", per_query.to_csv(index=False))
    atomic_write_text(folder / "aggregate.csv", aggregate.to_csv(index=False))
    atomic_write_text(folder / "systems.csv", systems_table.to_csv(index=False))
    return ChunkingStudy(per_query, aggregate, systems_table, folder)
