"""BM25 through bm25s — English (Snowball stemming, English stopwords) or Japanese (MeCab
morphemes, ``retrieval.analyzers``) — index cached on disk."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from grainlab.cache import (
    ArtifactCache,
    code_fingerprint,
    content_key,
    discard_dir,
    hash_texts,
    verify_dir_checksums,
    write_dir_checksums,
)
from grainlab.files import atomic_write_dir
from grainlab.retrieval.analyzers import analyzer_versions, check_language, japanese_tokens
from grainlab.retrieval.base import Retriever
from grainlab.spec import format_spec
from grainlab.types import Chunk, Document

BM25_CODE_VERSION = code_fingerprint("retrieval.bm25")


@functools.lru_cache(maxsize=2)
def _stemmer(language: str):
    import Stemmer

    return Stemmer.Stemmer(language)


@dataclass
class BM25Retriever(Retriever):
    """``bm25(k1=1.5,b=0.75,method=lucene)`` over unit texts (each unit's ``index_text``).

    Score of a unit *d* for a query *q*: Σ over terms *t* of *q* of
    ``idf(t) · tf(t,d) · (k1 + 1) / (tf(t,d) + k1 · (1 − b + b · |d| / avgdl))``
    (Robertson & Zaragoza 2009, "The Probabilistic Relevance Framework: BM25 and Beyond").

    Args:
        k1: term-frequency saturation; 1.2–2.0 is usual, 0.9 is Anserini's BEIR default.
        b: length normalisation, 0 (none) to 1 (full).
        method: bm25s's variant — ``lucene`` (Lucene's idf ``log(1 + (N − n + 0.5)/(n + 0.5))``,
            as Kamphuis et al. 2020, "Which BM25 Do You Mean?", recommend), ``robertson``
            (the original idf, which can be negative), ``atire``, ``bm25l``, ``bm25+``.
        stemmer: the PyStemmer (Snowball) language. stopwords: bm25s's stopword list.
        language: ``en`` (the above) or ``ja`` (morphemes by MeCab/UniDic; stemmer and stopwords
            unused), see ``retrieval.analyzers``.
        cache: where the index is stored (keyed by the units' ids and texts and these parameters).
    """

    k1: float = 1.5
    b: float = 0.75
    method: str = "lucene"
    stemmer: str = "english"
    stopwords: str = "en"
    language: str = "en"
    cache: ArtifactCache | None = None
    units: Sequence[Chunk] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        check_language(self.language)

    @property
    def spec(self) -> str:
        params = {"k1": self.k1, "b": self.b, "method": self.method}
        if self.language != "en":
            params["language"] = self.language
        return format_spec("bm25", params)

    @property
    def record(self) -> dict[str, object]:
        """The analyzer behind the index (for manifests)."""
        return {"language": self.language, **analyzer_versions(self.language)}

    def tokenize(self, texts: list[str]) -> list[list[str]]:
        """The analyzer: lowercase words, stopwords removed, Snowball-stemmed (``en``); content
        morphemes (``ja``)."""
        if self.language == "ja":
            return [japanese_tokens(t) for t in texts]
        import bm25s

        return bm25s.tokenize(texts, stopwords=self.stopwords, stemmer=_stemmer(self.stemmer),
                              return_ids=False, show_progress=False)

    def index_key(self, units: Sequence[Chunk]) -> str:
        """The cache key of the index over ``units``: their ids and texts, every parameter that
        changes the index, the analyzer and bm25s' version, and this module's source."""
        import bm25s

        return content_key(kind="bm25", units=hash_texts((u.chunk_id, u.index_text) for u in units),
                           k1=self.k1, b=self.b, method=self.method, stemmer=self.stemmer,
                           stopwords=self.stopwords, code=BM25_CODE_VERSION, bm25s=bm25s.__version__,
                           **({"language": self.language, "analyzer": analyzer_versions(self.language)}
                              if self.language != "en" else {}))

    def index(self, units: Sequence[Chunk], documents: Mapping[str, Document] | None = None) -> BM25Retriever:
        import bm25s

        self.units = units
        texts = [u.index_text for u in units]
        folder = (self.cache or ArtifactCache()).path("bm25", self.index_key(units), "")
        if folder.exists() and verify_dir_checksums(folder):
            self._model = bm25s.BM25.load(str(folder))
            return self
        discard_dir(folder)
        self._model = bm25s.BM25(k1=self.k1, b=self.b, method=self.method)
        tokens = self.tokenize(texts) if self.language == "ja" else bm25s.tokenize(
            texts, stopwords=self.stopwords, stemmer=_stemmer(self.stemmer), show_progress=False)
        self._model.index(tokens, show_progress=False)
        try:
            atomic_write_dir(folder, lambda tmp: (self._model.save(str(tmp)), write_dir_checksums(tmp)))
        except OSError:
            pass  # an index that cannot be cached is still usable in memory
        return self

    def score(self, queries: list[str]) -> np.ndarray:
        tokens = self.tokenize(queries)
        out = np.zeros((len(queries), len(self.units)), dtype=np.float32)
        for row, query_tokens in enumerate(tokens):
            if query_tokens:
                out[row] = self._model.get_scores(query_tokens)
        return out
