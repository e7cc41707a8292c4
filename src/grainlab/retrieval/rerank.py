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

    def __post_init__(self) -> None:
        self._memo: dict[tuple[str, str], float] = {}

    def rerank(self, queries: Mapping[str, str], run: Run, texts: Mapping[str, str], k: int) -> Run:
        """The top ``k`` of each ranking re-ordered by cross-encoder score (the rest dropped).

        Pairs already scored in this process are not scored again; the rest are scored in one
        batch whose scores are cached on disk under a key of their content.
        """
        wanted = [(queries[qid], texts[doc]) for qid, ranking in run.items() for doc, _ in ranking[:k]]
        missing = list(dict.fromkeys(pair for pair in wanted if pair not in self._memo))
        if missing:
            key = content_key(kind="rerank", encoder=self.encoder.identity,
                              pairs=hash_texts((q, p) for q, p in missing))
            scores = (self.cache or ArtifactCache()).array("rerank", key, lambda: self.encoder.score(missing))
            self._memo.update(zip(missing, map(float, scores)))
        out: Run = {}
        for qid, ranking in run.items():
            scored = [(doc, self._memo[(queries[qid], texts[doc])]) for doc, _ in ranking[:k]]
            out[qid] = sorted(scored, key=lambda item: (-item[1], item[0]))
        return out
