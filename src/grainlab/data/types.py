"""The shapes every dataset is turned into."""

from __future__ import annotations

from dataclasses import dataclass, field

from grainlab.types import Document

__all__ = ["Dataset", "Document"]


@dataclass
class Dataset:
    """BEIR shape (corpus, queries, qrels) plus gold answer strings for QA-style sets."""

    name: str
    corpus: dict[str, Document]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    answers: dict[str, list[str]] = field(default_factory=dict)
    info: dict[str, object] = field(default_factory=dict)

    @property
    def is_qa(self) -> bool:
        return bool(self.answers)

    def subset(self, query_ids: list[str] | None = None, doc_ids: list[str] | None = None) -> Dataset:
        """A smaller dataset (quick profiles): the given queries and/or documents."""
        qids = list(self.queries) if query_ids is None else list(query_ids)
        corpus = self.corpus if doc_ids is None else {d: self.corpus[d] for d in doc_ids}
        return Dataset(
            name=self.name,
            corpus=corpus,
            queries={q: self.queries[q] for q in qids},
            qrels={q: self.qrels[q] for q in qids if q in self.qrels},
            answers={q: self.answers[q] for q in qids if q in self.answers},
            info={**{k: v for k, v in self.info.items() if k != "recipe"}, "subset": True},
        )

    def fingerprint(self) -> str:
        """Content hash of corpus, queries, qrels, answers and gold spans (a cache-key component)."""
        from grainlab.cache import content_key, hash_texts

        return content_key(
            corpus=hash_texts((d.doc_id, d.text) for d in self.corpus.values()),
            queries=hash_texts(self.queries.items()),
            qrels=sorted((q, d, r) for q, docs in self.qrels.items() for d, r in docs.items()),
            answers=sorted((q, tuple(a)) for q, a in self.answers.items()),
            **({"gold_spans": sorted((q, tuple(map(tuple, spans))) for q, spans in self.info["gold_spans"].items())}
               if "gold_spans" in self.info else {}),  # type: ignore[union-attr]
        )
