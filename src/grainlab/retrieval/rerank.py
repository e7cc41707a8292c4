"""Re-scoring the head of a run with a cross-encoder; scores cached by content."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from grainlab.cache import ArtifactCache, content_key, hash_texts
from grainlab.models.cross_encoders import CrossEncoder, get_cross_encoder
from grainlab.retrieval.base import Run
from grainlab.spec import format_spec


@dataclass
class Reranker:
    """``rerank(model=cross-encoder/ms-marco-MiniLM-L-12-v2)``."""

    model: str = "cross-encoder/ms-marco-MiniLM-L-12-v2"
    cache: ArtifactCache | None = None

    @property
    def spec(self) -> str:
        return format_spec("rerank", {"model": self.model})

    @property
    def encoder(self) -> CrossEncoder:
        return get_cross_encoder(self.model)

    def rerank(self, queries: Mapping[str, str], run: Run, texts: Mapping[str, str], k: int) -> Run:
        """The top ``k`` of each ranking re-ordered by cross-encoder score (the rest dropped)."""
        pairs, slots = [], []
        for qid, ranking in run.items():
            for doc, _ in ranking[:k]:
                pairs.append((queries[qid], texts[doc]))
                slots.append((qid, doc))
        key = content_key(kind="rerank", encoder=self.encoder.identity,
                          pairs=hash_texts((q, p) for q, p in pairs))
        scores = (self.cache or ArtifactCache()).array("rerank", key, lambda: self.encoder.score(pairs))
        out: Run = {qid: [] for qid in run}
        for (qid, doc), score in zip(slots, scores):
            out[qid].append((doc, float(score)))
        return {qid: sorted(r, key=lambda item: (-item[1], item[0])) for qid, r in out.items()}
