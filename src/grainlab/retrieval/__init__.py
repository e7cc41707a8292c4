"""Retrievers (BM25, dense), aggregation, fusion, reranking, a staged pipeline, a spec factory."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from grainlab.cache import ArtifactCache
from grainlab.chunking.base import make_chunk
from grainlab.errors import ConfigError
from grainlab.retrieval.aggregate import METHODS, UnitGroups, collapse_to_documents
from grainlab.retrieval.base import Retriever, Run, top_k
from grainlab.retrieval.bm25 import BM25Retriever
from grainlab.retrieval.dense import DenseRetriever
from grainlab.retrieval.fusion import rrf, score_fusion
from grainlab.retrieval.late import LateChunkingRetriever, LatePooler
from grainlab.retrieval.pipeline import Hit, Pipeline, Trace
from grainlab.retrieval.rerank import Reranker
from grainlab.spec import check_types, parse_spec
from grainlab.types import Document

__all__ = ["BM25Retriever", "DenseRetriever", "Hit", "LatePooler", "LateChunkingRetriever", "METHODS", "Pipeline", "Reranker", "Retriever", "Run",
           "Trace", "UnitGroups", "available_retrievers", "collapse_to_documents", "get_retriever", "index_titled_documents", "retriever_class", "retriever_parameters", "rrf", "score_fusion",
           "top_k"]

_FACTORIES = {"bm25": BM25Retriever, "dense": DenseRetriever, "late": LateChunkingRetriever}


NOT_PARAMETERS = ("cache", "units")  # init fields that say where, not what


def retriever_class(name: str) -> type[Retriever]:
    if name not in _FACTORIES:
        raise ConfigError(f"unknown retriever {name!r}; known: {', '.join(sorted(_FACTORIES))}")
    return _FACTORIES[name]


def available_retrievers() -> list[str]:
    return sorted(_FACTORIES)


def _given_parameters(spec: str) -> tuple[str, dict[str, object]]:
    """A spec's retriever name and its parameters under their field names, checked."""
    name, params = parse_spec(spec)
    cls = retriever_class(name)
    aliases = getattr(cls, "SPEC_ALIASES", {})
    params = {aliases.get(key, key): value for key, value in params.items()}
    fields = {f.name: f.type for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    spelled = {field: alias for alias, field in aliases.items()}
    unknown = sorted(set(params) - set(fields) | (set(NOT_PARAMETERS) & set(params)))
    if unknown:
        raise ConfigError(f"retriever {name!r} has no parameter(s) {unknown}; it takes "
                          f"{sorted(spelled.get(f, f) for f in set(fields) - set(NOT_PARAMETERS))}")
    check_types(f"retriever {name!r}", params, fields)  # type: ignore[arg-type]
    return name, params


def retriever_parameters(spec: str) -> tuple[str, dict[str, object]]:
    """Every parameter of a retriever spec, defaults filled in, without building it (no model is
    loaded): ``bm25`` → ``("bm25", {"k1": 1.5, "b": 0.75, ...})``."""
    name, params = _given_parameters(spec)
    defaults = {f.name: f.default for f in dataclasses.fields(_FACTORIES[name])  # type: ignore[arg-type]
                if f.init and f.name not in NOT_PARAMETERS}
    return name, {**defaults, **params}


def get_retriever(spec: str, cache: ArtifactCache | None = None) -> Retriever:
    """``bm25``, ``bm25(k1=0.9,b=0.4)``, ``dense(model=BAAI/bge-small-en-v1.5)`` → a retriever."""
    name, params = _given_parameters(spec)
    try:
        return _FACTORIES[name](**params, cache=cache)
    except TypeError as exc:
        raise ConfigError(f"cannot build retriever {spec!r}: {exc}") from exc


def index_titled_documents(documents: Iterable[Document], spec: str, cache: ArtifactCache | None = None) -> Retriever:
    """A retriever over whole documents, each indexed as ``title + "\\n" + text`` (empty ones left
    out); ``search(..., aggregate="max")`` returns document ids."""
    units = [make_chunk(doc, 0, 0, len(doc.text), 0, context=doc.title) for doc in documents if doc.text.strip()]
    return get_retriever(spec, cache=cache).index(units)
