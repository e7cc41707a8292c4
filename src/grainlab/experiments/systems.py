"""What one group of result rows measures: a system is a value with typed fields.

A :class:`System` names its chunker, its retriever (or several, fused), how units become
documents or parents, optional pipeline :class:`Stages`, and free **tags** — typed facts such
as ``unit="proposition"`` that become result columns as they are. Nothing is parsed back out of
a label.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from grainlab.chunking.factory import get_chunker
from grainlab.errors import ConfigError
from grainlab.retrieval.aggregate import METHODS
from grainlab.retrieval.ann import IndexSpec
from grainlab.spec import format_spec, parse_spec

FUSIONS = ("rrf", "minmax", "zscore")
RESERVED_COLUMNS = frozenset({
    # result tables
    "dataset", "system", "retriever", "chunker", "aggregate", "stage", "qid", "measure", "value", "mean", "count",
    # the systems table (engine.run_experiment)
    "name", "key", "parents", "stages", "chunker_version", "retriever_spec", "model", "reranker", "runs", "runs_sha256",
    "reused",
    "n_units", "mean_unit_tokens", "index_tokens", "duplication_rate", "boundary_retention", "formula_units",
    "n_children", "chunk_s", "index_s", "search_s", "stage_seconds", "analyzer"})


def canonical(spec: str) -> str:
    """Re-render a spec string in canonical form (keys as given, literals normalised; a dense
    retriever's vector index in full, or left out when it is the default exact ``flat``)."""
    name, params = parse_spec(spec)
    if name == "dense" and "index" in params:
        index = IndexSpec.parse(str(params.pop("index")))
        if not index.exact:
            params["index"] = index.canonical
    return format_spec(name, params)


def retriever_label(spec: str) -> str:
    """``dense(model=BAAI/bge-small-en-v1.5,...)`` → ``bge-small-en-v1.5`` (plus its index when it is
    approximate: ``bge-small-en-v1.5 hnsw(M=32,...)``); ``bm25(...)`` → ``BM25``."""
    name, params = parse_spec(canonical(spec))
    if name == "dense":
        model = str(params["model"]).split("/")[-1]
        return f"{model} {params['index']}" if "index" in params else model
    return name.upper() if name == "bm25" else name


@dataclass(frozen=True)
class Stages:
    """candidates → fused → reranked → context (``retrieval.pipeline.Pipeline``), each measured.

    Args:
        fusion: ``rrf`` (Cormack et al. 2009), ``minmax`` or ``zscore`` score fusion; needed when a
            system has several retrievers, ``None`` for one.
        rrf_k: RRF's constant ``k`` in ``1 / (k + rank)`` (60 in the paper).
        reranker: a cross-encoder's Hugging Face id, or ``None`` for no reranking.
        candidate_k: units each retriever returns. rerank_k: units the reranker re-orders.
        context_k: context slots (one per document) after reranking.
    """

    fusion: str | None = None
    rrf_k: float = 60
    reranker: str | None = None
    candidate_k: int = 100
    rerank_k: int = 20
    context_k: int = 5

    def __post_init__(self) -> None:
        if self.fusion is not None and self.fusion not in FUSIONS:
            raise ConfigError(f"fusion must be one of {FUSIONS} or None, got {self.fusion!r}")
        if not 1 <= self.context_k <= self.rerank_k <= self.candidate_k:
            raise ConfigError(f"need 1 ≤ context_k ≤ rerank_k ≤ candidate_k, got {self.context_k}, "
                              f"{self.rerank_k}, {self.candidate_k}")

    @property
    def spec(self) -> str:
        params: dict[str, Any] = {"fusion": self.fusion or "none", "candidate_k": self.candidate_k,
                                  "rerank_k": self.rerank_k, "context_k": self.context_k}
        if self.fusion == "rrf":
            params["rrf_k"] = self.rrf_k
        if self.reranker:
            params["reranker"] = self.reranker
        return format_spec("stages", params)

    def measured(self, n_retrievers: int) -> tuple[str, ...]:
        """The stages whose runs are scored: without a reranker, a single retriever's candidates,
        the fused list (for one retriever, the same list) and the context; with one, the reranked
        window and the context (what comes before is the same as without the reranker)."""
        if self.reranker:
            return ("reranked", "context")
        return ("candidates", "fused", "context") if n_retrievers == 1 else ("fused", "context")


@dataclass(frozen=True)
class System:
    """What one group of result rows measures.

    Args:
        retriever: a retriever spec, or a tuple of specs fused by ``stages.fusion``.
        chunker: a chunker spec (``none`` keeps whole documents).
        aggregate: ``max``/``first``/``mean`` ranks documents (or parents) by their units;
            ``None`` ranks the units themselves.
        parents: search the children of a ``parent_child`` chunker and return their parents.
        stages: measure a staged pipeline (fusion, reranking, context selection) stage by stage.
        label: the ``system`` column (defaults to the canonical name).
        tags: typed facts that become columns as they are (``unit="proposition"``); they describe
            a system and do not change what it computes, so they are not part of its key.
    """

    retriever: str | tuple[str, ...]
    chunker: str = "none"
    aggregate: str | None = "max"
    parents: bool = False
    stages: Stages | None = None
    label: str | None = None
    tags: Mapping[str, Any] | tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        tags = dict(self.tags)
        clash = sorted(set(tags) & RESERVED_COLUMNS)
        if clash or not all(isinstance(k, str) and k.isidentifier() for k in tags):
            raise ConfigError(f"tag names must be identifiers other than {sorted(RESERVED_COLUMNS)}, got {sorted(tags)}")
        if not all(isinstance(v, str | int | float | bool) for v in tags.values()):
            raise ConfigError(f"tag values must be str, int, float or bool, got {tags}")
        object.__setattr__(self, "tags", tuple(sorted(tags.items())))
        chunker = get_chunker(self.chunker)
        object.__setattr__(self, "chunker", chunker.spec)
        specs = (self.retriever,) if isinstance(self.retriever, str) else tuple(self.retriever)
        if not specs:
            raise ConfigError("a system needs at least one retriever")
        specs = tuple(canonical(s) for s in specs)
        object.__setattr__(self, "retriever", specs[0] if len(specs) == 1 else specs)
        if self.aggregate is not None and self.aggregate not in METHODS:
            raise ConfigError(f"aggregate must be one of {METHODS} or None, got {self.aggregate!r}")
        if self.parents and not chunker.has_parents:
            raise ConfigError(f"{self.display}: parents=True needs a parent_child chunker, got {self.chunker}")
        if self.parents and self.aggregate is None:
            raise ConfigError(f"{self.display}: parents=True ranks parents by their children: give an aggregate")
        if len(specs) > 1 and (self.stages is None or self.stages.fusion is None):
            raise ConfigError(f"{self.display}: several retrievers need stages=Stages(fusion=...)")
        if self.stages is not None and self.stages.fusion is not None and len(specs) < 2:
            raise ConfigError(f"{self.display}: fusion needs at least two retrievers")
        if self.stages is not None and self.aggregate not in (None, "max"):
            raise ConfigError(f"{self.display}: a staged pipeline ranks documents by their best unit: "
                              f"aggregate must be 'max' or None, got {self.aggregate!r}")
        if self.stages is not None and self.parents:
            raise ConfigError(f"{self.display}: staged pipelines select parents themselves; drop parents=True")

    @classmethod
    def from_name(cls, name: str) -> System:
        """The system whose canonical :attr:`name` is ``name`` (as a manifest records it)."""
        parts = name.split("|")
        if len(parts) < 3:
            raise ConfigError(f"not a system name: {name!r}; expected 'retriever|chunker|aggregate[|parents][|stages(...)]'")
        retrievers, chunker, aggregate, rest = parts[0].split(" + "), parts[1], parts[2], parts[3:]
        stages = None
        for part in rest:
            if part.startswith("stages("):
                _, params = parse_spec(part)
                fusion = params.pop("fusion", "none")
                stages = Stages(fusion=None if fusion == "none" else str(fusion), **params)  # type: ignore[arg-type]
            elif part != "parents":
                raise ConfigError(f"{name!r}: unknown part {part!r}")
        system = cls(retrievers[0] if len(retrievers) == 1 else tuple(retrievers), chunker,
                     None if aggregate == "units" else aggregate, parents="parents" in rest, stages=stages)
        if system.name != name:
            raise ConfigError(f"{name!r} is not canonical (it reads back as {system.name!r})")
        return system

    @property
    def retrievers(self) -> tuple[str, ...]:
        return (self.retriever,) if isinstance(self.retriever, str) else self.retriever

    @property
    def retriever_column(self) -> str:
        """The ``retriever`` column: the spec, or the fused specs joined by `` + ``."""
        return " + ".join(self.retrievers)

    @property
    def name(self) -> str:
        """The canonical name: retriever(s), chunker, aggregation and stages."""
        parts = [self.retriever_column, self.chunker, self.aggregate or "units"]
        if self.parents:
            parts.append("parents")
        if self.stages is not None:
            parts.append(self.stages.spec)
        return "|".join(parts)

    @property
    def display(self) -> str:
        return self.label or self.name
