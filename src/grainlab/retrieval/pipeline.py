"""A staged retrieval pipeline with a trace of every stage.

candidates (each retriever, ``candidate_k``) → fusion (RRF or score fusion) → rerank
(cross-encoder over the top ``rerank_k``) → context selection (``context_k`` slots, one per
parent when ``dedupe_parents``, within ``token_budget``). Every hit carries its lineage.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from grainlab.errors import ConfigError
from grainlab.retrieval.base import Retriever, Run
from grainlab.retrieval.fusion import rrf, score_fusion
from grainlab.retrieval.rerank import Reranker
from grainlab.types import Chunk

Ranked = list[tuple[str, int, float]]  # (unit id, rank from 1, score)
PIPELINE_VERSION = "1"  # bump when the same stages would fuse, rerank or select differently


@dataclass(frozen=True)
class Hit:
    """A selected unit and where it came from."""

    unit_id: str
    doc_id: str
    parent_id: str | None
    start: int
    end: int
    chunker: str
    retrievers: tuple[str, ...]
    reranker: str | None
    score: float
    rank: int


@dataclass
class Trace:
    """What each stage did for one query."""

    query_id: str
    candidates: dict[str, Ranked] = field(default_factory=dict)
    fused: Ranked = field(default_factory=list)
    reranked: Ranked = field(default_factory=list)
    context: list[Hit] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)


def _ranked(ranking: list[tuple[str, float]]) -> Ranked:
    return [(uid, rank, score) for rank, (uid, score) in enumerate(ranking, start=1)]


@dataclass
class Pipeline:
    retrievers: Sequence[Retriever]
    units: Sequence[Chunk]
    chunker: str = "unknown"
    fusion: str | None = "rrf"  # "rrf" | "minmax" | "zscore" | None (first retriever only)
    rrf_k: float = 60
    weights: Sequence[float] | None = None
    reranker: Reranker | None = None
    candidate_k: int = 100
    rerank_k: int = 20
    context_k: int = 5
    token_budget: int | None = None
    dedupe_parents: bool = True
    timings: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.context_k <= self.rerank_k <= self.candidate_k:
            raise ConfigError(f"need 1 ≤ context_k ≤ rerank_k ≤ candidate_k, got context_k={self.context_k}, "
                              f"rerank_k={self.rerank_k}, candidate_k={self.candidate_k}")
        if self.fusion not in (None, "rrf", "minmax", "zscore"):
            raise ConfigError(f"fusion must be 'rrf', 'minmax', 'zscore' or None, got {self.fusion!r}")
        if self.fusion is None and len(self.retrievers) != 1:
            raise ConfigError("several retrievers need a fusion method")
        self._by_id = {u.chunk_id: u for u in self.units}

    def _timed(self, stage: str, start: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - start

    def run(self, queries: Mapping[str, str]) -> tuple[dict[str, Run], dict[str, Trace]]:
        """Runs after each stage (``candidates:<spec>``, ``fused``, ``reranked``, ``context``) and traces."""
        stages: dict[str, Run] = {}
        for retriever in self.retrievers:
            tick = time.perf_counter()
            stages[f"candidates:{retriever.spec}"] = retriever.search(dict(queries), k=self.candidate_k)
            self._timed(f"candidates:{retriever.spec}", tick)
        candidate_runs = list(stages.values())
        tick = time.perf_counter()
        if self.fusion is None:
            fused = candidate_runs[0]
        elif self.fusion == "rrf":
            fused = rrf(candidate_runs, k=self.rrf_k, weights=self.weights, depth=self.candidate_k)
        else:
            fused = score_fusion(candidate_runs, self.fusion, weights=self.weights, depth=self.candidate_k)
        stages["fused"] = fused
        self._timed("fusion", tick)
        tick = time.perf_counter()
        if self.reranker is not None:
            texts = {uid: self._by_id[uid].index_text for ranking in fused.values() for uid, _ in ranking[:self.rerank_k]}
            reranked = self.reranker.rerank(queries, fused, texts, self.rerank_k)
        else:
            reranked = {q: r[:self.rerank_k] for q, r in fused.items()}
        stages["reranked"] = reranked
        self._timed("rerank", tick)
        tick = time.perf_counter()
        traces = {qid: self._trace(qid, stages) for qid in queries}
        stages["context"] = {qid: [(h.unit_id, h.score) for h in t.context] for qid, t in traces.items()}
        self._timed("context", tick)
        return stages, traces

    def _trace(self, qid: str, stages: dict[str, Run]) -> Trace:
        trace = Trace(qid, {name.split(":", 1)[1]: _ranked(run.get(qid, [])) for name, run in stages.items()
                            if name.startswith("candidates:")},
                      _ranked(stages["fused"].get(qid, [])), _ranked(stages["reranked"].get(qid, [])))
        taken_parents: dict[str, str] = {}
        used = 0
        for uid, rank, score in trace.reranked:
            unit = self._by_id[uid]
            parent = unit.parent_id or unit.doc_id
            if len(trace.context) >= self.context_k:
                trace.excluded[uid] = f"beyond context_k={self.context_k}"
            elif self.dedupe_parents and parent in taken_parents:
                trace.excluded[uid] = f"parent {parent} already in context via {taken_parents[parent]}"
            elif self.token_budget is not None and used + unit.n_tokens > self.token_budget:
                trace.excluded[uid] = f"over token budget ({used} + {unit.n_tokens} > {self.token_budget})"
            else:
                used += unit.n_tokens
                taken_parents[parent] = uid
                trace.context.append(Hit(uid, unit.doc_id, unit.parent_id, unit.start, unit.end, self.chunker,
                                         tuple(r.spec for r in self.retrievers),
                                         self.reranker.spec if self.reranker else None, score, rank))
        for uid, _, _ in trace.fused[self.rerank_k:]:
            trace.excluded.setdefault(uid, f"beyond rerank_k={self.rerank_k}")
        return trace
