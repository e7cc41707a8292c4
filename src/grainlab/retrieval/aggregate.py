"""Unit → document score aggregation (PyTerrier's MaxPassage / FirstPassage / MeanPassage)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from grainlab.errors import ConfigError
from grainlab.types import Chunk

METHODS = ("max", "first", "mean")


@dataclass
class UnitGroups:
    """Which document each unit belongs to, in a layout that makes aggregation vectorised."""

    doc_ids: list[str]
    order: np.ndarray  # unit indices sorted by document (stable)
    starts: np.ndarray  # start of each document's run within ``order``
    counts: np.ndarray
    first_unit: np.ndarray  # per document: index of its lowest-position unit

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
        return cls(doc_ids, order, starts, counts, order[starts])

    def aggregate(self, scores: np.ndarray, method: str) -> np.ndarray:
        """``[nq, n_units]`` unit scores → ``[nq, n_docs]`` document scores."""
        if method == "max":
            return np.maximum.reduceat(scores[:, self.order], self.starts, axis=1)
        if method == "mean":
            return np.add.reduceat(scores[:, self.order], self.starts, axis=1) / self.counts
        if method == "first":
            return scores[:, self.first_unit]
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
