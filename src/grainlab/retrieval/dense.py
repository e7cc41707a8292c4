"""Exact inner-product search over cached bi-encoder embeddings (CPU or CUDA)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from grainlab.cache import ArtifactCache
from grainlab.models.encoders import Encoder, cached_encode
from grainlab.retrieval.base import Retriever
from grainlab.spec import format_spec
from grainlab.types import Chunk, Document


@dataclass
class DenseRetriever(Retriever):
    """``dense(model=<hf id>,max_length=N)``: cosine similarity of normalised embeddings."""

    model: str = "sentence-transformers/all-MiniLM-L6-v2"
    max_length: int | None = None
    batch_size: int = 32
    cache: ArtifactCache | None = None
    units: Sequence[Chunk] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        self.encoder = Encoder(self.model, max_length=self.max_length, batch_size=self.batch_size)
        self._cache = self.cache or ArtifactCache()

    @property
    def spec(self) -> str:
        return format_spec("dense", {"model": self.model, "max_length": self.encoder.config.max_length})

    def _embed(self, texts: list[str], role: str) -> np.ndarray:
        return cached_encode(self.encoder, texts, role, self._cache)

    def index(self, units: Sequence[Chunk], documents: Mapping[str, Document] | None = None) -> DenseRetriever:
        import torch

        self.units = units
        self.embeddings = self._embed([u.index_text for u in units], "passage")
        self._matrix = torch.from_numpy(self.embeddings).to(self.encoder.device)  # moved once
        return self

    def score(self, queries: list[str]) -> np.ndarray:
        import torch

        q = torch.from_numpy(self._embed(queries, "query")).to(self.encoder.device)
        return (q @ self._matrix.T).float().cpu().numpy()
