"""The retriever protocol: index units, score queries, return ranked runs."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import ClassVar

import numpy as np
from tqdm.auto import tqdm

from grainlab.retrieval.aggregate import UnitGroups
from grainlab.types import Chunk, Document, Run


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices and values of the ``k`` best columns of each row, best first, ties by index.

    Ties at the cut-off are decided by index too (the lowest indices get in): ``np.argpartition``
    alone picks an arbitrary subset of tied columns, and which one depends on the CPU's SIMD sort
    (e.g. many BM25 units tied at score 0 when a query matches fewer than ``k``)."""
    k = min(k, scores.shape[1])
    if k == 0:
        empty = np.zeros((scores.shape[0], 0))
        return empty.astype(int), empty
    part = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    kth = np.take_along_axis(scores, part, axis=1).min(axis=1)
    for row in np.flatnonzero((scores >= kth[:, None]).sum(axis=1) > k):  # a tie straddles the cut
        above = np.flatnonzero(scores[row] > kth[row])
        tied = np.flatnonzero(scores[row] == kth[row])[: k - len(above)]
        part[row] = np.concatenate([above, tied])
    vals = np.take_along_axis(scores, part, axis=1)
    order = np.lexsort((part, -vals), axis=1)
    index = np.take_along_axis(part, order, axis=1)
    return index, np.take_along_axis(scores, index, axis=1)


class Retriever(ABC):
    """Scores every indexed unit for each query; ``search`` ranks units or documents."""

    units: Sequence[Chunk]
    version: ClassVar[str] = "1"
    """Bump when the same parameters and units would score differently (a results-key part)."""

    @property
    @abstractmethod
    def spec(self) -> str:
        """Canonical string, e.g. ``bm25(k1=1.5,b=0.75,method=lucene)``."""

    @abstractmethod
    def index(self, units: Sequence[Chunk], documents: Mapping[str, Document] | None = None) -> Retriever:
        """Build (or load from the cache) the index over ``units``.

        Args:
            units: the retrieval units, each with exact offsets into its document.
            documents: the documents the units were cut from, by id; needed by retrievers that
                read a unit in its document's context (late chunking), ignored by the others.
        """

    @abstractmethod
    def score(self, queries: list[str]) -> np.ndarray:
        """``[len(queries), len(units)]`` scores."""

    def search(self, queries: dict[str, str], k: int = 100, aggregate: str | None = None,
               block: int = 128, progress: bool = False, group_by: str = "doc") -> Run:
        """Top-``k`` units per query, or top-``k`` documents (``group_by="doc"``) or parents
        (``"parent"``) when ``aggregate`` is ``max``/``first``/``mean``."""
        groups = UnitGroups.from_units(self.units, by=group_by) if aggregate else None
        ids = groups.doc_ids if groups else [u.chunk_id for u in self.units]
        qids = list(queries)
        run: Run = {}
        for start in tqdm(range(0, len(qids), block), desc=f"search {self.spec}", disable=not progress):
            batch = qids[start:start + block]
            scores = self.score([queries[q] for q in batch])
            if groups is not None:
                scores = groups.aggregate(scores, aggregate)
            index, values = top_k(scores, k)
            for row, qid in enumerate(batch):
                run[qid] = [(ids[i], float(v)) for i, v in zip(index[row], values[row]) if np.isfinite(v)]
        return run

    def __str__(self) -> str:
        return self.spec
