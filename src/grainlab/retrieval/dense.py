"""Dense retrieval over cached bi-encoder embeddings: exact inner product (CPU or CUDA), or an
approximate FAISS index (``index=hnsw(...)``, ``ivf(...)``, ``ivfpq(...)``: ``retrieval.ann``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from grainlab.cache import ArtifactCache
from grainlab.models.embedders import load_encoder
from grainlab.models.embedding_cache import cached_encode
from grainlab.models.encoders import embedding_key
from grainlab.retrieval.aggregate import UnitGroups
from grainlab.retrieval.ann import IndexSpec, cached_index, on_device, search_index
from grainlab.retrieval.base import Retriever
from grainlab.spec import format_spec
from grainlab.types import Chunk, Document, Run


@dataclass
class DenseRetriever(Retriever):
    """``dense(model=<hf id>,max_length=N[,dimension=N][,index=<index spec>][,ann_depth=N])``: cosine
    similarity of normalised embeddings.

    Args:
        model: the bi-encoder's Hugging Face id (a GGUF embedder such as
            ``nomic-ai/nomic-embed-text-v1.5`` runs on llama.cpp: ``models.llama_encoder``).
        max_length: word pieces read per unit (default: the model's preset; for a GGUF embedder
            its trained context).
        dimension: a Matryoshka size, for models that have them (default: the full vector).
        index_spec: ``flat`` (exact, the default) or an approximate FAISS index, e.g.
            ``hnsw(M=32,efSearch=128)`` (``index=`` in a spec string; see ``retrieval.ann``).
        ann_depth: with an approximate index and document aggregation, how many units the index
            returns before their documents are rescored exactly (default ``10 × k``).
        backend: a GGUF embedder's runtime — ``auto`` (torch), ``llama.cpp`` or ``torch``
            (``models.embedders.gguf_backend``); the spec names it when it is llama.cpp, so tables
            from the two runtimes never share a key.
    """

    SPEC_ALIASES: ClassVar[dict[str, str]] = {"index": "index_spec"}

    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    max_length: int | None = None
    batch_size: int = 32
    dimension: int | None = None
    index_spec: str = "flat"
    ann_depth: int | None = None
    backend: str = "auto"
    cache: ArtifactCache | None = None
    units: Sequence[Chunk] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.vector_index = IndexSpec.parse(self.index_spec)
        self.encoder = load_encoder(self.model, max_length=self.max_length, batch_size=self.batch_size,
                                    dimension=self.dimension, backend=self.backend)
        self._cache = self.cache or ArtifactCache()
        self._ann: Any = None

    @property
    def spec(self) -> str:
        params: dict[str, Any] = {"model": self.model, "max_length": self.encoder.config.max_length}
        if self.dimension is not None:
            params["dimension"] = self.dimension
        if not self.vector_index.exact:  # exact search is the default, left out as ir-measures leaves defaults out
            params["index"] = self.vector_index.canonical
        if self.ann_depth is not None:
            params["ann_depth"] = self.ann_depth
        if self.encoder.identity.get("backend") == "llama.cpp":
            params["backend"] = "llama.cpp"
        return format_spec("dense", params)

    def _embed(self, texts: list[str], role: str) -> np.ndarray:
        return cached_encode(self.encoder, texts, role, self._cache)

    def index(self, units: Sequence[Chunk], documents: Mapping[str, Document] | None = None) -> DenseRetriever:
        import torch

        self.units = units
        texts = [u.index_text for u in units]
        self.embeddings = self._embed(texts, "passage")
        self._matrix = torch.from_numpy(self.embeddings).to(self.encoder.device)  # moved once
        if not self.vector_index.exact and len(units):
            index = cached_index(self.embeddings, self.vector_index, embedding_key(self.encoder, texts, "passage"),
                                 self._cache)
            self._ann = on_device(index, self.vector_index, self.encoder.device)
        return self

    def score(self, queries: list[str]) -> np.ndarray:
        """Exact scores of every unit (what ``flat`` ranks by, and what ANN candidates are rescored with)."""
        import torch

        q = torch.from_numpy(self._embed(queries, "query")).to(self.encoder.device)
        return (q @ self._matrix.T).float().cpu().numpy()

    def search(self, queries: dict[str, str], k: int = 100, aggregate: str | None = None,
               block: int = 128, progress: bool = False, group_by: str = "doc") -> Run:
        if self._ann is None:
            return super().search(queries, k, aggregate, block, progress, group_by)
        qids = list(queries)
        vectors = self._embed([queries[q] for q in qids], "query")
        if aggregate is None:
            ids, scores = search_index(self._ann, vectors, k)
            return {qid: [(self.units[i].chunk_id, float(v)) for i, v in zip(ids[row], scores[row]) if i >= 0]
                    for row, qid in enumerate(qids)}
        groups = UnitGroups.from_units(self.units, by=group_by)
        ids, _ = search_index(self._ann, vectors, self.ann_depth or 10 * k)
        run: Run = {}
        for row, qid in enumerate(qids):
            found = ids[row][ids[row] >= 0]
            members, chosen = groups.members(found)
            scores = self.embeddings[members] @ vectors[row]
            values = groups.reduce(scores, chosen, aggregate)
            best = np.lexsort((chosen, -values))[:k]
            run[qid] = [(groups.doc_ids[chosen[i]], float(values[i])) for i in best]
        return run
