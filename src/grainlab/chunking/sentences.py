"""Sentence boundaries (pysbd, rule-based, offline) and the n-sentences chunker."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from grainlab.chunking.base import Chunk, Chunker, make_chunk, register, trim_span
from grainlab.data.types import Document
from grainlab.errors import ConfigError
from grainlab.models.tokenizers import get_tokenizer


@functools.lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the sentences of ``text`` (memoised: pysbd is slow on long documents
    and segmentation metrics ask for the same document's sentences many times)."""
    return list(_sentence_spans(text))


@functools.lru_cache(maxsize=256)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """Character spans of the sentences of ``text``; together they cover every non-space char.

    pysbd proposes sentences; each is located in ``text`` after the previous one, and a
    sentence runs up to the next one's start, so nothing pysbd drops or rewrites is lost.
    """
    if not text.strip():
        return ()
    starts: list[int] = []
    cursor = 0
    for sentence in _segmenter().segment(text):
        stripped = sentence.strip()
        if not stripped:
            continue
        found = text.find(stripped, cursor)
        if found < 0:
            continue
        if not starts or found > starts[-1]:
            starts.append(found)
        cursor = found + len(stripped)
    if not starts:
        starts = [0]
    starts[0] = 0
    bounds = starts + [len(text)]
    spans = [trim_span(text, bounds[i], bounds[i + 1]) for i in range(len(starts))]
    return tuple((s, e) for s, e in spans if s < e)


@register("sentences")
@dataclass(frozen=True)
class SentenceChunker(Chunker):
    """``n`` consecutive sentences per chunk (the last chunk may hold fewer)."""

    n: int = 5
    tokenizer: str = "cl100k_base"

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"sentences n must be ≥ 1, got {self.n}")

    def chunk(self, doc: Document) -> list[Chunk]:
        tok = get_tokenizer(self.tokenizer)
        spans = sentence_spans(doc.text)
        chunks = []
        for position, first in enumerate(range(0, len(spans), self.n)):
            group = spans[first:first + self.n]
            start, end = group[0][0], group[-1][1]
            chunks.append(make_chunk(doc, position, start, end, tok.count(doc.text[start:end]),
                                     metadata={"n_sentences": len(group)}))
        return chunks
