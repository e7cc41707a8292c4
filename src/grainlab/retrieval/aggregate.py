"""Unit → document score aggregation (PyTerrier's MaxPassage / FirstPassage / MeanPassage)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from grainlab.errors import ConfigError
from grainlab.types import Chunk

METHODS = ("max", "first", "mean")
AGGREGATE_VERSION = "1"  # bump when the same units and method would rank documents differently


@dataclass
class UnitGroups:
    """Which document each unit belongs to, in a layout that makes aggregation vectorised."""

    doc_ids: list[str]
    order: np.ndarray  # unit indices sorted by document (stable)
    starts: np.ndarray  # start of each document's run within ``order``
    counts: np.ndarray
    first_unit: np.ndarray  # per document: index of its lowest-position unit
    group_of: np.ndarray  # per unit: its document's (or parent's) index in ``doc_ids``

    @classmethod
    def from_units(cls, units: Sequence[Chunk], by: str = "doc") -> UnitGroups:
        """Group units by their document (``by="doc"``) or their parent (``by="parent"``,
        parent–child retrieval: score small children, return their parent)."""
        if by not in ("doc", "parent"):
            raise ConfigError(f"group units by 'doc' or 'parent', not {by!r}")
        owner = [u.doc_id if by == "doc" else (u.parent_id or u.doc_id) for u in units]
        doc_ids = list(dict.fromkeys(owner))
        slot = {d: i for i, d in enumerate(doc_ids)}
        group = np.fromiter((slot[o] for o in owner), dtype=np.int64, count=len(units))
        positions = np.fromiter((u.position for u in units), dtype=np.int64, count=len(units))
        order = np.lexsort((positions, group))
        counts = np.bincount(group, minlength=len(doc_ids))
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        return cls(doc_ids, order, starts, counts, order[starts], group)

    def aggregate(self, scores: np.ndarray, method: str) -> np.ndarray:
        """``[nq, n_units]`` unit scores → ``[nq, n_docs]`` document scores."""
        return _reduce(scores[:, self.order], self.starts, self.counts, method)

    def members(self, units: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The groups the given units belong to (sorted, each once) and all their units, group by
        group in position order — what :meth:`reduce` aggregates (exact rescoring of ANN hits)."""
        chosen = np.unique(self.group_of[np.asarray(units, dtype=np.int64)])
        if not len(chosen):
            return np.zeros(0, dtype=np.int64), chosen
        spans = [self.order[self.starts[g]:self.starts[g] + self.counts[g]] for g in chosen]
        return np.concatenate(spans), chosen

    def reduce(self, scores: np.ndarray, chosen: np.ndarray, method: str) -> np.ndarray:
        """Scores of :meth:`members`' units → one score per chosen group."""
        if not len(chosen):
            return np.zeros(0, dtype=scores.dtype)
        counts = self.counts[chosen]
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        return _reduce(scores[None, :], starts, counts, method)[0]


def _reduce(ordered: np.ndarray, starts: np.ndarray, counts: np.ndarray, method: str) -> np.ndarray:
    """Aggregate ``[nq, n]`` scores laid out group by group (each group's units in position order)."""
    if method == "max":
        return np.maximum.reduceat(ordered, starts, axis=1)
    if method == "mean":
        return np.add.reduceat(ordered, starts, axis=1) / counts
    if method == "first":
        return ordered[:, starts]
    raise ConfigError(f"unknown aggregation {method!r}; choose one of {METHODS}")


def collapse_to_documents(run: dict[str, list[tuple[str, float]]],
                          unit_doc: dict[str, str]) -> dict[str, list[tuple[str, float]]]:
    """A unit run as a document run: each document at its best unit's place and score
    (max aggregation over the retrieved units, order kept)."""
    out = {}
    for qid, ranking in run.items():
        seen: dict[str, float] = {}
        for uid, score in ranking:
            seen.setdefault(unit_doc[uid], score)
        out[qid] = list(seen.items())
    return out
